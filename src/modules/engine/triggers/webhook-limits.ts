import { FailureLimiter } from '../../../platform/failure-limiter.js';

/**
 * Failed webhook calls (a wrong or missing token, a bad, stale or replayed signature), counted as sign-in
 * failures are (sessions.service.ts), per replica: `maxFailures` per pipeline and client address within
 * the window, ten times as many per pipeline from all addresses (a flood from many addresses pauses that
 * webhook for the window) and per address across pipelines (one address cannot spray every pipeline).
 * Beyond any of them a call answers 429 before its token is looked at.
 */
export class WebhookFailureLimits {
  private readonly perPipelineAddress: FailureLimiter;
  private readonly perPipeline: FailureLimiter;
  private readonly perAddress: FailureLimiter;

  constructor(config: { maxFailures: number; windowSeconds: number }, now: () => number) {
    const windowMs = config.windowSeconds * 1000;
    this.perPipelineAddress = new FailureLimiter(config.maxFailures, windowMs, now);
    this.perPipeline = new FailureLimiter(config.maxFailures * 10, windowMs, now);
    this.perAddress = new FailureLimiter(config.maxFailures * 10, windowMs, now);
  }

  /** Seconds until a call to `pipelineId` from `address` may be tried, or 0 when it may be now. */
  retryAfter(pipelineId: string, address: string): number {
    return Math.max(
      this.perPipelineAddress.retryAfter(`${pipelineId}|${address}`),
      this.perPipeline.retryAfter(pipelineId),
      this.perAddress.retryAfter(address),
    );
  }

  /**
   * Counts a failed call. Only failures count, after the check: a sender of valid calls, however many at
   * once, is never held back by its own traffic (wrong calls sent at the same instant may all be checked
   * before the first is counted: the limit holds within the concurrency of one burst).
   */
  failed(pipelineId: string, address: string): void {
    this.perPipelineAddress.recordFailure(`${pipelineId}|${address}`);
    this.perPipeline.recordFailure(pipelineId);
    this.perAddress.recordFailure(address);
  }

  /** The call authenticated: its address starts afresh on that pipeline. */
  succeeded(pipelineId: string, address: string): void {
    this.perPipelineAddress.clear(`${pipelineId}|${address}`);
  }
}
