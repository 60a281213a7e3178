/**
 * The delay before reconnect attempt `attempt` (0-based): 1 s doubling up to 60 s, with ±20 % jitter
 * so that many connections to one restarted server do not return in step.
 */
export function reconnectDelayMs(
  attempt: number,
  baseMs = 1000,
  maxMs = 60_000,
  random = Math.random,
): number {
  const delay = Math.min(maxMs, baseMs * 2 ** Math.min(attempt, 30));
  return Math.round(delay * (0.8 + 0.4 * random()));
}
