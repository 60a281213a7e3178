import { useEffect, useState } from 'react';
import { ApiFailure, errorText } from '../../api/client';
import { readEventStream } from '../../api/event-stream';
import { type LatestValue, latestValue, openValueStream } from './uns-api';

/**
 * Where the live connection stands: `live` (streaming), `connecting` (first attempt), `reconnecting`
 * (after a failure, with backoff), `paused` (the page is hidden: the stream is closed to spare the
 * server) or `stopped` (refused for good, e.g. no permission; `error` says why).
 */
export type LiveState = 'connecting' | 'live' | 'reconnecting' | 'paused' | 'stopped';

const FIRST_RETRY_MS = 1000;
const LONGEST_RETRY_MS = 30_000;

/**
 * The newer of two values by declared timestamp (RFC 3339 in UTC with six fractional digits, so text
 * order is time order); of equal timestamps the later arrival, which replaced the earlier one.
 */
export function newerValue(previous: LatestValue | null, next: LatestValue): LatestValue {
  if (!previous || next.timestamp >= previous.timestamp) return next;
  return previous;
}

/** Exponential backoff with jitter: about 1 s, 2 s, 4 s … at most 30 s. */
function retryDelay(failures: number): number {
  const base = Math.min(LONGEST_RETRY_MS, FIRST_RETRY_MS * 2 ** Math.max(0, failures - 1));
  return base * (0.8 + Math.random() * 0.4);
}

const isHidden = () => document.visibilityState === 'hidden';

/** Whether a refusal will not change by retrying (401 also signs the console out, see client.ts). */
function isFinal(failure: unknown): boolean {
  return (
    failure instanceof ApiFailure && failure.status >= 400 && failure.status < 500 && failure.status !== 429
  );
}

/**
 * The latest value of `topic`, kept current by the server's live stream (`/uns/data/stream`, read with
 * fetch so that it carries the session cookie and the organization header). Once connected it reads
 * the latest value once, for values committed before the subscription; after that every committed
 * value arrives as it happens, and the newest by declared timestamp is shown (a backfill does not
 * replace it). A failed or ended stream reconnects with backoff, reading the latest value at each
 * attempt, so the value stays fresh even while the stream cannot be opened. Hidden pages close it.
 */
export function useLiveValue(topic: string, initial: LatestValue | null) {
  const [value, setValue] = useState<LatestValue | null>(initial);
  const [state, setState] = useState<LiveState>('connecting');
  const [error, setError] = useState<string | null>(null);

  useEffect(() => {
    let stopped = false;
    let controller: AbortController | null = null;
    let wake: (() => void) | null = null;
    const merge = (next: LatestValue | null) => {
      if (!stopped && next) setValue((previous) => newerValue(previous, next));
    };
    const refresh = () => latestValue(topic).then(merge, () => {});
    const pause = (ms: number) =>
      new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, ms);
        wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    const onVisibility = () => {
      if (isHidden()) controller?.abort();
      else wake?.();
    };
    document.addEventListener('visibilitychange', onVisibility);

    const run = async () => {
      let failures = 0;
      while (!stopped) {
        if (isHidden()) {
          setState('paused');
          await pause(LONGEST_RETRY_MS);
          continue;
        }
        controller = new AbortController();
        try {
          const body = await openValueStream(topic, controller.signal);
          if (stopped) return;
          setState('live');
          setError(null);
          failures = 0;
          void refresh();
          for await (const event of readEventStream(body)) {
            if (event.type === 'value') merge(JSON.parse(event.data) as LatestValue);
          }
          // The server ended the stream (`event: closed`, e.g. at a restart): reconnect soon.
        } catch (failure) {
          if (stopped) return;
          if (isFinal(failure)) {
            setState('stopped');
            setError(errorText(failure));
            return;
          }
        }
        if (stopped || isHidden()) continue;
        setState('reconnecting');
        failures++;
        await pause(retryDelay(failures));
        void refresh();
      }
    };
    void run();
    return () => {
      stopped = true;
      document.removeEventListener('visibilitychange', onVisibility);
      controller?.abort();
      wake?.();
    };
  }, [topic]);

  return { value, state, error };
}
