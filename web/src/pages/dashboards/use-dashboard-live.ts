import { useEffect, useRef } from 'react';
import { readEventStream } from '../../api/event-stream';
import { openFilterStream } from './dashboards-api';

export interface LiveValue {
  topic: string;
  value: unknown;
  timestamp: string;
  quality: number;
}

/**
 * The one filter whose stream carries every topic of a dashboard: the segments all topics share, then
 * `#` (a browser holds few connections to one server, so a dashboard opens one stream, not one a topic).
 */
export function coveringFilter(paths: string[]): string | null {
  if (paths.length === 0) return null;
  const split = paths.map((p) => p.split('/'));
  const common: string[] = [];
  for (let i = 0; ; i++) {
    const segment = split[0]![i];
    if (segment === undefined || segment === '+' || segment === '#') break;
    if (!split.every((s) => s[i] === segment && i < s.length - 1)) break;
    common.push(segment);
  }
  // A filter has a segment after the version prefix.
  return common.length === 0 ? null : `${common.join('/')}/#`;
}

/**
 * Calls `onValue` with every value committed to the dashboard's topics (filter paths count by their
 * literal part), over one live stream that reconnects with backoff and pauses while the page is hidden.
 */
export function useDashboardLive(paths: string[], onValue: (value: LiveValue) => void) {
  const handler = useRef(onValue);
  handler.current = onValue;
  const filter = coveringFilter(paths);

  useEffect(() => {
    if (!filter) return;
    let stopped = false;
    let controller: AbortController | null = null;
    let failures = 0;
    const run = async () => {
      while (!stopped) {
        if (document.visibilityState === 'hidden') {
          await new Promise((r) => setTimeout(r, 1000));
          continue;
        }
        controller = new AbortController();
        try {
          const body = await openFilterStream(filter, controller.signal);
          failures = 0;
          for await (const event of readEventStream(body)) {
            if (event.type === 'value') handler.current(JSON.parse(event.data) as LiveValue);
          }
        } catch {
          if (stopped) return;
        }
        failures++;
        await new Promise((r) => setTimeout(r, Math.min(30_000, 1000 * 2 ** Math.min(5, failures - 1))));
      }
    };
    void run();
    return () => {
      stopped = true;
      controller?.abort();
    };
  }, [filter]);
}
