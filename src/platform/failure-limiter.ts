/**
 * Counts failures per key in a fixed window (login attempts, client authentication). In memory, per
 * replica: behind a load balancer each replica enforces its own limit.
 */
export class FailureLimiter {
  private readonly failures = new Map<string, { count: number; resetAt: number; lastAt: number }>();

  constructor(
    private readonly maxFailures: number,
    private readonly windowMs: number,
    private readonly now: () => number,
  ) {}

  /** Seconds until `key` may try again, or 0 when it may try now. */
  retryAfter(key: string): number {
    const entry = this.failures.get(key);
    if (!entry) return 0;
    const now = this.now();
    if (entry.resetAt <= now) {
      this.failures.delete(key);
      return 0;
    }
    return entry.count >= this.maxFailures ? Math.ceil((entry.resetAt - now) / 1000) : 0;
  }

  recordFailure(key: string): void {
    const now = this.now();
    const entry = this.failures.get(key);
    if (!entry || entry.resetAt <= now) {
      this.failures.set(key, { count: 1, resetAt: now + this.windowMs, lastAt: now });
      if (this.failures.size > 100_000) this.prune(now);
    } else {
      entry.count++;
      entry.lastAt = now;
    }
  }

  /** When the last failure of `key` was recorded (ms), or null when none counts now. */
  lastFailureAt(key: string): number | null {
    return this.failures.get(key)?.lastAt ?? null;
  }

  /** Takes back one failure recorded for an attempt that turned out to succeed. */
  forgive(key: string): void {
    const entry = this.failures.get(key);
    if (entry && entry.count > 0) entry.count--;
  }

  clear(key: string): void {
    this.failures.delete(key);
  }

  private prune(now: number): void {
    for (const [key, entry] of this.failures) if (entry.resetAt <= now) this.failures.delete(key);
  }
}
