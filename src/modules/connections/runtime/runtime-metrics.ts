/** Counters and latencies of one connection's runtime (kept by its owner, shown by every replica). */
export interface RuntimeMetrics {
  /** Functions run (polls and executes). */
  requests: number;
  /** Failed requests, and sessions that could not be opened (each connect or reconnect attempt). */
  errors: number;
  /** The errors that were time-outs. */
  timeouts: number;
  /** Attempts to open a session again after a failed attempt or a lost session. */
  reconnects: number;
  valuesPublished: number;
  publishErrors: number;
  latencyMs: { p50: number | null; p95: number | null };
}

const WINDOW = 1000;

/** The metrics of a connection: counts, and latency percentiles over the last 1,000 requests. */
export class MetricsRecorder {
  requests = 0;
  errors = 0;
  timeouts = 0;
  reconnects = 0;
  valuesPublished = 0;
  publishErrors = 0;
  private readonly latencies: number[] = [];
  private next = 0;

  observe(durationMs: number, outcome: 'ok' | 'error' | 'timeout'): void {
    this.requests++;
    if (outcome === 'error') this.errors++;
    if (outcome === 'timeout') {
      this.errors++;
      this.timeouts++;
    }
    if (this.latencies.length < WINDOW) this.latencies.push(durationMs);
    else this.latencies[this.next] = durationMs;
    this.next = (this.next + 1) % WINDOW;
  }

  /** A session that could not be opened (a connect or reconnect attempt, or an execute's own session). */
  failedAttempt(timedOut: boolean): void {
    this.errors++;
    if (timedOut) this.timeouts++;
  }

  snapshot(): RuntimeMetrics {
    const sorted = [...this.latencies].sort((a, b) => a - b);
    const at = (q: number) =>
      sorted.length === 0
        ? null
        : Math.round(sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]! * 100) / 100;
    return {
      requests: this.requests,
      errors: this.errors,
      timeouts: this.timeouts,
      reconnects: this.reconnects,
      valuesPublished: this.valuesPublished,
      publishErrors: this.publishErrors,
      latencyMs: { p50: at(0.5), p95: at(0.95) },
    };
  }
}

export const EMPTY_METRICS: RuntimeMetrics = new MetricsRecorder().snapshot();
