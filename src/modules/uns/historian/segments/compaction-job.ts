import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import type { FastifyBaseLogger } from 'fastify';
import type { Kysely } from 'kysely';
import type { Clock } from '../../../../platform/clock.js';
import { JobLease } from '../../../../storage/job-lease.js';
import type { Database } from '../../../../storage/tables.js';
import { DAY_US } from '../historian-layout.js';
import type { SegmentCompactor } from './compaction-thread.js';
import type { ReclaimResult } from './disk-reclaim.js';
import { type CompactionFigures, dayOf } from './segment-store.js';

/**
 * How the server paces compaction on its thread (CompactionJobDeps.paceWhenBusy): while the event loop
 * is busy (at least BUSY_UTILIZATION of the time between two days), the job waits nine times as long as
 * the day took, so that compaction takes at most a tenth of the time of the thread, the write lock and
 * the database server while publishes are coming in, and runs flat out while they are not. A day of
 * 8,640 values takes about 16 ms (SQLite, a free core), so even paced it compacts 50,000 values a
 * second, five times what a plant of 10,000 tags at 1 Hz publishes. At a fifth, PostgreSQL's server
 * (whose compaction work runs at the publishes' priority) held MQTT QoS 0 publishing at 0.94x.
 */
export const COMPACTION_PACE_WHEN_BUSY = 9;
const BUSY_UTILIZATION = 0.25;

export interface CompactionJobDeps {
  db: Kysely<Database>;
  /** SegmentStore, or the compaction thread that runs one (compaction-thread.ts). */
  store: SegmentCompactor;
  clock: Clock;
  /** Resolves once every committed value is in `uns_values` (HistorianWrites.settle). */
  settle: () => Promise<void>;
  /** How old a day's end must be before the day is compacted (MERIDIAN_UNS_COMPRESS_AFTER). */
  compressAfterMs: number;
  log?: FastifyBaseLogger;
  replicaId?: string;
  /** How long the lease lasts without renewal. Default 60 s. */
  leaseMs?: number;
  /** How often the job runs when started. Default 10 minutes. */
  tickMs?: number;
  /**
   * How long after start the first run waits. Default 1 minute: start-up (and a server that lives
   * seconds, as in tests) does not pay for starting the compaction thread.
   */
  firstRunMs?: number;
  /**
   * While the event loop is busy, the pause after each day, as a multiple of the day's time (see
   * COMPACTION_PACE_WHEN_BUSY). Default 0: no pause (compaction on the event loop makes it busy itself).
   */
  paceWhenBusy?: number;
  /** Gives back the disk the rows took, after a run that compacted values (disk-reclaim.ts). */
  reclaim?: (beforeUs: number) => Promise<ReclaimResult>;
  /**
   * A cheap question on the event loop's connection, asked first (SegmentStore.hasRowsBefore): when no
   * row is declared before the horizon, the run ends there, without the lease, the settle or a message
   * to the compaction thread, which then is never started (it costs seconds of CPU to start).
   */
  hasRowsBefore?: (beforeUs: number) => Promise<boolean>;
}

/** What a run of the job is asked: a dry run, and a signal that ends it after the day in hand. */
export interface CompactionRunOptions {
  /** Measures what compaction would give and changes nothing (no lease needed). */
  dryRun?: boolean;
  /** Once aborted, the run stops after the day in hand (what is left is the next run's). */
  signal?: AbortSignal;
}

/**
 * Compacts complete days into segments: every UTC day of every topic whose end lies more than
 * `compressAfterMs` in the past, one transaction a topic and day (`SegmentStore.compactDay`). One
 * replica at a time holds the `uns-compaction` lease in `job_leases`, renewed between days; a replica
 * that loses it stops after the day in hand. Its progress is the data itself (rows left are rows to
 * compact), so a crash or another replica taking over continues where it stood.
 */
export class CompactionJob {
  readonly lease: JobLease;
  private timer: NodeJS.Timeout | undefined;
  private firstRun: NodeJS.Timeout | undefined;
  private running: Promise<unknown> = Promise.resolve();
  /** Ends the run in hand (stop). */
  private readonly stopping = new AbortController();
  /** The last whole run of this job (not a dry run): when it ended and what it compacted. */
  last: (CompactionFigures & { atMs: number }) | null = null;
  /** What the last run gave back of the disk. */
  lastReclaim: ReclaimResult | null = null;

  constructor(private readonly deps: CompactionJobDeps) {
    this.lease = new JobLease(
      deps.db,
      'uns-compaction',
      deps.replicaId ?? `replica-${randomUUID().slice(0, 8)}`,
      deps.leaseMs ?? 60_000,
    );
  }

  /** The first day (epoch µs) not yet complete at `nowMs`: days before it may be compacted. */
  horizonUs(nowMs: number): number {
    return dayOf((nowMs - this.deps.compressAfterMs) * 1000);
  }

  /**
   * Compacts every complete day now, holding the lease (answers null when another replica holds it).
   * `dryRun`: measures what compaction would give and changes nothing (no lease needed); `signal`: the
   * run stops after the day in hand once it is aborted.
   */
  async compactCompleteDays(options: CompactionRunOptions = {}): Promise<CompactionFigures | null> {
    const dryRun = options.dryRun ?? false;
    const total: CompactionFigures = { values: 0, segments: 0, rowBytes: 0, segmentBytes: 0 };
    const { hasRowsBefore } = this.deps;
    if (hasRowsBefore && !(await hasRowsBefore(this.horizonUs(this.deps.clock.now())))) {
      if (!dryRun) this.last = { atMs: this.deps.clock.now(), ...total };
      return total;
    }
    if (!dryRun && !(await this.lease.hold(this.deps.clock.now()))) return null;
    await this.deps.settle();
    const beforeUs = this.horizonUs(this.deps.clock.now());
    const pace = dryRun ? 0 : (this.deps.paceWhenBusy ?? 0);
    let utilization = performance.eventLoopUtilization();
    for (const series of await this.deps.store.seriesBefore(beforeUs)) {
      let day: number | null = dayOf(series.firstUs);
      while (day !== null) {
        if (options.signal?.aborted) return this.ended(total, dryRun);
        if (!dryRun && !(await this.lease.hold(this.deps.clock.now()))) return total;
        const started = performance.now();
        const done = await this.deps.store.compactDay(series.topicId, day, dryRun);
        total.values += done.values;
        total.segments += done.segments;
        total.rowBytes += done.rowBytes;
        total.segmentBytes += done.segmentBytes;
        const next = await this.deps.store.nextRowAt(series.topicId, day + DAY_US, beforeUs);
        day = next === null ? null : dayOf(next);
        if (pace > 0) {
          const now = performance.eventLoopUtilization();
          const busy = performance.eventLoopUtilization(now, utilization).utilization >= BUSY_UTILIZATION;
          utilization = now;
          if (busy) await sleep((performance.now() - started) * pace);
        }
      }
    }
    return this.ended(total, dryRun, beforeUs);
  }

  /** A run's end: the disk given back (when it compacted values), its figures kept. */
  private async ended(
    total: CompactionFigures,
    dryRun: boolean,
    beforeUs?: number,
  ): Promise<CompactionFigures> {
    if (!dryRun && total.values > 0 && this.deps.reclaim && beforeUs !== undefined) {
      try {
        this.lastReclaim = await this.deps.reclaim(beforeUs);
        if (this.lastReclaim.note) this.deps.log?.info(this.lastReclaim.note);
      } catch (error) {
        // Nothing is lost: the next run gives the space back.
        this.deps.log?.warn({ err: error }, 'historian disk not given back after compaction');
      }
    }
    if (!dryRun) this.last = { atMs: this.deps.clock.now(), ...total };
    return total;
  }

  start(): void {
    const run = () => {
      this.running = this.compactCompleteDays({ signal: this.stopping.signal })
        .then(
          (figures) => {
            if (figures !== null && figures.values > 0)
              this.deps.log?.info({ figures }, 'historian compacted');
          },
          (error: unknown) => this.deps.log?.warn({ err: error }, 'historian compaction failed'),
        )
        // Between runs the lease is free: `meridian historian compact` or another replica may take it.
        .then(() => this.lease.release())
        .catch(() => {});
    };
    this.timer = setInterval(run, this.deps.tickMs ?? 600_000);
    this.timer.unref();
    this.firstRun = setTimeout(run, this.deps.firstRunMs ?? 60_000);
    this.firstRun.unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    clearTimeout(this.firstRun);
    // A run in hand ends after its day: shutdown does not wait for a whole backlog to be compacted.
    this.stopping.abort();
    await this.running;
    // As the rollup job's: at shutdown the database may already be closed; the lease then runs out.
    await this.lease.release().catch(() => {});
  }
}
