import type { InvalidationBus } from '../../platform/invalidation-bus.js';
import { STANDING_TOPICS } from './access-directory.js';

/** The longest delay setTimeout takes; a PAT may expire a year ahead. */
const MAX_TIMER_MS = 2 ** 31 - 1;

export interface StandingWatch {
  bus: InvalidationBus;
  /** How often the credential is checked again. */
  intervalMs: number;
  now: () => number;
  onError: (error: unknown) => void;
  userId: string;
  organizationId: string;
  /** When the credential expires (epoch ms), if it does: a check runs then. */
  expiresAt?: number;
  /** Why access is gone, or null while it stands. */
  reasonToClose: () => Promise<string | null>;
  /** Called once, with the reason, when access is gone; the watch has stopped by then. */
  onLost: (reason: string) => void;
}

/**
 * Keeps checking that a long-lived connection's credential (a live value stream, an MQTT session) still
 * admits it: every `intervalMs`, at the credential's expiry, and at once when the bus announces a change
 * of the user, the organization or the membership (from any replica). Checks never overlap: one asked for
 * while another runs follows it. A check that throws (storage down) is reported and retried at the next
 * tick. Returns the function that stops watching.
 */
export function watchStanding(watch: StandingWatch): () => void {
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  let running = false;
  let again = false;

  const schedule = () => {
    clearTimeout(timer);
    if (stopped) return;
    let delay = watch.intervalMs;
    if (watch.expiresAt !== undefined) delay = Math.min(delay, watch.expiresAt - watch.now());
    timer = setTimeout(check, Math.min(MAX_TIMER_MS, Math.max(0, delay)));
    timer.unref();
  };

  const check = async () => {
    if (stopped) return;
    if (running) {
      again = true;
      return;
    }
    running = true;
    try {
      const reason =
        watch.expiresAt !== undefined && watch.expiresAt <= watch.now()
          ? 'the credential has expired'
          : await watch.reasonToClose();
      if (reason !== null && !stopped) {
        stop();
        watch.onLost(reason);
        return;
      }
    } catch (error) {
      watch.onError(error);
    } finally {
      running = false;
    }
    if (again) {
      again = false;
      void check();
    } else schedule();
  };

  const { userId, organizationId } = watch;
  const unsubscribe = watch.bus.subscribe((event) => {
    const concerns =
      event.topic === '*' ||
      (event.topic === STANDING_TOPICS.user && event.id === userId) ||
      (event.topic === STANDING_TOPICS.organization && event.id === organizationId) ||
      (event.topic === STANDING_TOPICS.membership && event.id === `${userId}|${organizationId}`);
    if (concerns) void check();
  });

  const stop = () => {
    stopped = true;
    clearTimeout(timer);
    unsubscribe();
  };
  schedule();
  return stop;
}
