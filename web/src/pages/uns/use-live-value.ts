import { useEffect, useState } from 'react';
import { errorText } from '../../api/client';
import { type LatestValue, latestValue } from './uns-api';

/** How often the latest value is read: the API has no push channel (WebSocket or SSE) yet. */
export const POLL_INTERVAL_MS = 1000;

/**
 * The latest value of `topic`, read every second while the page is visible. Each answer replaces the
 * last; a failed read keeps the last value and says why.
 */
export function useLiveValue(topic: string, initial: LatestValue | null) {
  const [value, setValue] = useState<LatestValue | null>(initial);
  const [error, setError] = useState<string | null>(null);

  useEffect(() => {
    let stopped = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const tick = async () => {
      if (document.visibilityState === 'visible') {
        try {
          const next = await latestValue(topic);
          if (stopped) return;
          setValue((previous) =>
            previous &&
            next &&
            previous.timestamp === next.timestamp &&
            previous.receivedAt === next.receivedAt
              ? previous
              : next,
          );
          setError(null);
        } catch (failure) {
          if (!stopped) setError(errorText(failure));
        }
      }
      if (!stopped) timer = setTimeout(tick, POLL_INTERVAL_MS);
    };
    timer = setTimeout(tick, POLL_INTERVAL_MS);
    return () => {
      stopped = true;
      clearTimeout(timer);
    };
  }, [topic]);

  return { value, error };
}
