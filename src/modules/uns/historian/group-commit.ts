import { LatencyCounts } from '../../../platform/http/metrics.js';

/** Tuning of group commit. */
export interface GroupCommitOptions {
  /** How long the first waiting job waits for company; 0 takes what arrived in the same turn of the event loop. */
  windowMs: number;
  /** Most records one transaction takes; a single job larger than this still goes alone, never split. */
  maxRecords: number;
  /** Transactions that may run at once (1 on SQLite, which has one writer). */
  concurrency: number;
}

interface Waiter<J> {
  job: J;
  size: number;
  /** performance.now() when it was submitted. */
  submittedAt: number;
  resolve(): void;
  reject(error: unknown): void;
}

/**
 * Group commit: concurrent publishers share one transaction. A job waits until a writer slot is free
 * (and at most `windowMs`), then every waiting job up to `maxRecords` is written together and each
 * waiter resolves once that transaction has committed. When a shared transaction fails, each of its
 * jobs is retried alone, so one bad job never fails an unrelated valid one.
 */
export class GroupCommitter<J> {
  private readonly queue: Waiter<J>[] = [];
  private queuedRecords = 0;
  private running = 0;
  private timer: NodeJS.Timeout | NodeJS.Immediate | null = null;
  private idleWaiters: (() => void)[] = [];
  /** Transactions committed and jobs written, for the broker status and benchmarks. */
  readonly stats = { transactions: 0, jobs: 0, records: 0 };
  /**
   * Seconds each transaction took, from its hand-over to its commit (a thread busy with something else
   * first included), and each job waited before its transaction began (behind the one committing):
   * `meridian_historian_commit_seconds` and `meridian_historian_commit_wait_seconds` (app.ts).
   */
  readonly latency = { commit: new LatencyCounts(), wait: new LatencyCounts() };

  constructor(
    private readonly write: (jobs: J[]) => Promise<void>,
    private readonly options: GroupCommitOptions,
  ) {}

  /** Resolves when the job is committed; rejects with the error of its own (retried) transaction. */
  submit(job: J, size: number): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.queue.push({ job, size, submittedAt: performance.now(), resolve, reject });
      this.queuedRecords += size;
      this.schedule();
    });
  }

  /** Resolves once nothing is queued or being written (for shutdown). */
  drain(): Promise<void> {
    if (this.queue.length === 0 && this.running === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  private schedule(): void {
    if (this.queue.length === 0 || this.running >= this.options.concurrency) return;
    if (this.queuedRecords >= this.options.maxRecords) {
      this.clearTimer();
      this.flush();
      return;
    }
    if (this.timer) return;
    const fire = () => {
      this.timer = null;
      this.flush();
    };
    this.timer = this.options.windowMs > 0 ? setTimeout(fire, this.options.windowMs) : setImmediate(fire);
  }

  private clearTimer(): void {
    if (!this.timer) return;
    clearTimeout(this.timer as NodeJS.Timeout);
    clearImmediate(this.timer as NodeJS.Immediate);
    this.timer = null;
  }

  private flush(): void {
    if (this.queue.length === 0 || this.running >= this.options.concurrency) return;
    const batch: Waiter<J>[] = [];
    let records = 0;
    while (this.queue.length > 0) {
      const next = this.queue[0]!;
      if (batch.length > 0 && records + next.size > this.options.maxRecords) break;
      batch.push(this.queue.shift()!);
      records += next.size;
    }
    this.queuedRecords -= records;
    this.running++;
    void this.run(batch).finally(() => {
      this.running--;
      this.schedule();
      if (this.queue.length === 0 && this.running === 0) {
        const waiters = this.idleWaiters;
        this.idleWaiters = [];
        for (const resolve of waiters) resolve();
      }
    });
  }

  private async run(batch: Waiter<J>[]): Promise<void> {
    const began = performance.now();
    for (const waiter of batch) this.latency.wait.observe((began - waiter.submittedAt) / 1000);
    try {
      await this.write(batch.map((w) => w.job));
      this.latency.commit.observe((performance.now() - began) / 1000);
      this.count(batch);
      for (const waiter of batch) waiter.resolve();
      return;
    } catch (error) {
      if (batch.length === 1) {
        batch[0]!.reject(error);
        return;
      }
    }
    for (const waiter of batch) {
      try {
        await this.write([waiter.job]);
        this.count([waiter]);
        waiter.resolve();
      } catch (error) {
        waiter.reject(error);
      }
    }
  }

  private count(batch: Waiter<J>[]): void {
    this.stats.transactions++;
    this.stats.jobs += batch.length;
    for (const waiter of batch) this.stats.records += waiter.size;
  }
}
