import type { LateRange } from './late-values.js';

/** Writes late ranges (`RollupCoverage.noteLate`): one call, one transaction. */
export type WriteLateNotes = (ranges: readonly LateRange[], nowUs: number) => Promise<void>;

/**
 * The late values of commits on their way to `uns_rollup_late`, gathered per topic: one write is in
 * flight at a time, and the ranges of the commits that arrive meanwhile are merged per topic (earliest to
 * latest) into the next one. A backfill at full speed (every value late, every commit a note) wrote one
 * transaction a commit on the event loop's connection, each flushed to disk there; the job then
 * recomputed and deleted one row a commit and topic. MQTT QoS 0 backfill on SQLite, two cores under a
 * load of 16-19: 41 note writes took 1.8 s of the event loop in a run of 60,000 messages, and the job's
 * 1,151 deletes of those notes 13.6 s.
 *
 * A write waits `gatherMs` (100 ms) for more commits' ranges before it starts, unless `written()` asks for
 * them: the job and readers ask before they read the notes, so nothing reads a note late. Without the wait,
 * the soak's late MQTT values (about 100 commits a second) were 80 durable writes a second, each a commit
 * and a WAL fsync whose thread-pool wake-up took the event loop's core.
 *
 * Nothing waits for a note on the publish path (as before: a note is written after its commit, off the
 * answer); a crash before the write loses it, as one in flight was lost before. A clean stop asks for them.
 */
export class LateNotes {
  private pending = new Map<string, LateRange>();
  private pendingNowUs = 0;
  private writing: Promise<void> | null = null;
  /** Ends the wait for more ranges at once (set while a write waits). */
  private endWait: (() => void) | null = null;
  /** Callers of `written()` waiting: no write waits for more ranges meanwhile. */
  private asking = 0;

  constructor(
    private readonly write: WriteLateNotes,
    private readonly onError: (error: unknown) => void,
    private readonly gatherMs = 100,
  ) {}

  /** Notes a commit's late ranges: written with the next write, which starts within `gatherMs`. */
  add(ranges: readonly LateRange[], nowUs: number): void {
    if (ranges.length === 0) return;
    for (const range of ranges) {
      const key = `${range.organizationId}\u0000${range.path}`;
      const known = this.pending.get(key);
      if (!known) this.pending.set(key, { ...range });
      else {
        if (range.fromUs < known.fromUs) known.fromUs = range.fromUs;
        if (range.toUs > known.toUs) known.toUs = range.toUs;
        // A merged range stands for its latest commit only when every one of them is numbered.
        if (known.seq !== undefined) {
          if (range.seq === undefined) delete known.seq;
          else known.seq = Math.max(known.seq, range.seq);
        }
      }
    }
    this.pendingNowUs = nowUs;
    this.writing ??= this.drain().finally(() => {
      this.writing = null;
    });
  }

  /** Resolves once every range added so far is written (or failed to be: logged through `onError`). */
  async written(): Promise<void> {
    this.asking++;
    try {
      while (this.writing !== null) {
        this.endWait?.();
        await this.writing;
      }
    } finally {
      this.asking--;
    }
  }

  private async drain(): Promise<void> {
    while (this.pending.size > 0) {
      await this.gather();
      const ranges = [...this.pending.values()];
      this.pending = new Map();
      try {
        await this.write(ranges, this.pendingNowUs);
      } catch (error) {
        this.onError(error);
      }
    }
  }

  /** Waits `gatherMs` for more ranges, or until `written()` asks. */
  private gather(): Promise<void> {
    if (this.gatherMs <= 0 || this.asking > 0) return Promise.resolve();
    return new Promise<void>((resolve) => {
      const timer = setTimeout(() => this.endWait?.(), this.gatherMs);
      this.endWait = () => {
        clearTimeout(timer);
        this.endWait = null;
        resolve();
      };
    });
  }
}
