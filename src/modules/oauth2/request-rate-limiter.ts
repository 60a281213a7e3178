/**
 * Counts requests per key in fixed one-minute windows (in memory, per replica). Used on the token
 * endpoint per client and per address.
 */
export class RequestRateLimiter {
  private readonly windows = new Map<string, { count: number; resetAt: number }>();

  constructor(
    private readonly limitPerMinute: number,
    private readonly now: () => number,
  ) {}

  /** Counts one request; answers the seconds to wait when the key is over its limit, else 0. */
  hit(key: string): number {
    const now = this.now();
    let entry = this.windows.get(key);
    if (!entry || entry.resetAt <= now) {
      entry = { count: 0, resetAt: now + 60_000 };
      this.windows.set(key, entry);
      if (this.windows.size > 100_000) this.prune(now);
    }
    entry.count++;
    return entry.count > this.limitPerMinute ? Math.ceil((entry.resetAt - now) / 1000) : 0;
  }

  private prune(now: number): void {
    for (const [key, entry] of this.windows) if (entry.resetAt <= now) this.windows.delete(key);
  }
}
