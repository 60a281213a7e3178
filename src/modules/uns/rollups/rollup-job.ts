import { randomUUID } from 'node:crypto';
import type { FastifyBaseLogger } from 'fastify';
import type { Kysely } from 'kysely';
import type { Clock } from '../../../platform/clock.js';
import type { DurableWrite } from '../../../storage/durable-write.js';
import { JobLease } from '../../../storage/job-lease.js';
import type { Database } from '../../../storage/tables.js';
import type { LateMark, StoredCoverage } from './rollup-coverage.js';
import { ceilTo, floorTo } from './rollup-store.js';
import { type HistorianRollups, ROLLUP_UNITS_US } from './rollups.js';

/**
 * How long after a unit ends the job rolls it up: values committed later than this after their
 * timestamp are noted as late (`lateRanges`) and recomputed. Absorbs commit delays and clock skew.
 */
export const ROLLUP_GRACE_MS = 120_000;
/** The most one step of the job rolls up of one series: six hours (360 minute units). */
const STEP_US = 6 * 3_600_000_000;
const SMALLEST_UNIT_US = ROLLUP_UNITS_US[2];
/** Topics whose last recomputation the job remembers (`Counted`); forgetting one costs a recomputation. */
const MAX_COUNTED_TOPICS = 10_000;
/** Late marks a pass reads (oldest first), recomputed per topic. */
const LATE_MARKS_A_PASS = 1000;

/** A mark's topic, as a key. */
const topicKey = (mark: LateMark) => `${mark.organizationId}\u0000${mark.path}`;

/** Marks of the same topic as one mark spanning them all (with the first one's id), and their ids. */
function byTopic(marks: readonly LateMark[]): { mark: LateMark; ids: string[] }[] {
  const groups = new Map<string, { mark: LateMark; ids: string[] }>();
  for (const mark of marks) {
    const key = topicKey(mark);
    const group = groups.get(key);
    if (!group) groups.set(key, { mark: { ...mark }, ids: [mark.id] });
    else {
      group.mark.fromUs = Math.min(group.mark.fromUs, mark.fromUs);
      group.mark.toUs = Math.max(group.mark.toUs, mark.toUs);
      group.ids.push(mark.id);
    }
  }
  return [...groups.values()];
}

export interface RollupJobOptions {
  /** How often the job runs a tick; 0: never by itself (tests call `tick`). Default 1 s. */
  tickMs?: number;
  /** How long a tick may keep starting steps: the job's own time, its pauses not counted. Default 50 ms. */
  budgetMs?: number;
  /**
   * How long the job holds the event loop before it pauses for a turn of it (between steps). Default 5 ms.
   * On SQLite every statement is synchronous on the event loop: a tick of 50 ms without pauses held every
   * request for those 50 ms (a stall of the soak's p99).
   */
  sliceMs?: number;
  /** How long the lease lasts without renewal. Default 15 s. */
  leaseMs?: number;
  replicaId?: string;
}

export interface RollupJobDeps extends RollupJobOptions {
  db: Kysely<Database>;
  rollups: HistorianRollups;
  clock: Clock;
  /** For the lease's renewals (Storage.durableWrite); the units' writes go through `rollups`. */
  write?: DurableWrite;
  /** Resolves once every committed value can be read. */
  settle: () => Promise<void>;
  /** The historian writer's `handedOver` (where commits are numbered in the order they are committed). */
  handedOver?: () => number | undefined;
  log: FastifyBaseLogger;
}

/**
 * What the job's last recomputation of a topic's late values counted: every value of a commit numbered
 * `seq` or lower (`HistorianWrites.handedOver`) with a timestamp in [fromUs, toUs), in every rolled-up
 * series of the topic.
 */
interface Counted {
  seq: number;
  fromUs: number;
  toUs: number;
}

/** What the job did since it started. */
export interface RollupJobStats {
  ticks: number;
  /** Ticks this replica held the lease in. */
  heldTicks: number;
  steps: number;
  /** Units the job computed (forward, late values, new series). */
  units: number;
  lateMarks: number;
  /** Steps that built coarser units from finer rollups instead of raw values (late values). */
  builtFromFiner: number;
  /** Units of late values extended by the values after their last one instead of recomputed (`fillLate`). */
  lateTails: number;
  /** Late notes dropped without a recomputation: their values were counted already (`Counted`). */
  lateCounted: number;
}

/**
 * The background rollup job: keeps `uns_rollups` ahead of the first query. Run by one replica at a time
 * (the `uns-rollups` lease in `job_leases`); each tick does bounded work (steps of at most six hours of
 * one series, until `budgetMs` has passed), in this order: the late values noted in `uns_rollup_late`
 * (their units recomputed, newest part first, coverage extended down to them), topics whose latest value
 * is a number and that have no coverage yet (registered from their first value), and then the series
 * most behind, rolled forward to the horizon (the unit that ended `ROLLUP_GRACE_MS` ago). Its progress is
 * the coverage in the database, so a restart, or another replica taking over, continues where it stood.
 */
export class RollupJob {
  readonly lease: JobLease;
  readonly stats: RollupJobStats = {
    ticks: 0,
    heldTicks: 0,
    steps: 0,
    units: 0,
    lateMarks: 0,
    builtFromFiner: 0,
    lateTails: 0,
    lateCounted: 0,
  };
  /** By topic (`organizationId\0path`): what the last recomputation of its late values counted. */
  private readonly counted = new Map<string, Counted>();
  private readonly budgetMs: number;
  private readonly sliceMs: number;
  /** When the job last took the event loop back (performance.now()): its current slice began. */
  private sliceStart = 0;
  /** How long the pass in hand has paused for the event loop (not counted in its budget). */
  private pausedMs = 0;
  private timer: NodeJS.Timeout | undefined;
  private ticking: Promise<boolean> = Promise.resolve(false);
  private stopped = false;

  constructor(private readonly deps: RollupJobDeps) {
    this.lease = new JobLease(
      deps.db,
      'uns-rollups',
      deps.replicaId ?? `replica-${randomUUID().slice(0, 8)}`,
      deps.leaseMs ?? 15_000,
      deps.write,
    );
    this.budgetMs = deps.budgetMs ?? 50;
    this.sliceMs = deps.sliceMs ?? 5;
  }

  start(): void {
    const tickMs = this.deps.tickMs ?? 1000;
    this.stopped = false;
    if (tickMs <= 0) return;
    this.timer = setInterval(() => void this.tick(), tickMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    await this.ticking;
    await this.lease.release().catch(() => {});
  }

  /** One tick, serialized with the others; answers whether work was left when its budget ran out. */
  tick(): Promise<boolean> {
    this.ticking = this.ticking
      .then(() => this.pass())
      .catch((error: unknown) => {
        this.deps.log.warn({ err: error }, 'rollup job tick failed');
        return false;
      });
    return this.ticking;
  }

  /** Ticks until nothing is left to do (tests and benches); false when this replica does not hold the job. */
  async runUntilIdle(): Promise<boolean> {
    for (;;) {
      const before = this.stats.heldTicks;
      const more = await this.tick();
      if (this.stats.heldTicks === before) return false;
      if (!more) return true;
    }
  }

  private async pass(): Promise<boolean> {
    this.stats.ticks++;
    if (this.stopped) return false;
    const { clock } = this.deps;
    if (!(await this.lease.hold(clock.now()))) return false;
    this.stats.heldTicks++;
    await this.deps.settle();
    // Late values of the commits settled above are noted before the job reads the notes.
    await this.deps.rollups.notesWritten();
    const horizonUs = (clock.now() - ROLLUP_GRACE_MS) * 1000;
    const coverage = this.deps.rollups.coverage;
    // At least one step a tick, however small the budget; then steps while the budget lasts.
    const stepsBefore = this.stats.steps;
    this.pausedMs = 0;
    const started = performance.now();
    this.sliceStart = started;
    const inTime = async () => {
      await this.pauseAfterSlice();
      if (this.stats.steps === stepsBefore) return true;
      return performance.now() - started - this.pausedMs < this.budgetMs && !this.stopped;
    };

    let marksLeft = false;
    // The marks of one topic (a commit notes one a topic) are recomputed as one, from the earliest to the
    // latest: a backfill at full speed notes every topic it writes at every commit, and recomputing each
    // mark alone recomputed the same units once a commit. Marks recomputed whole go in one delete after
    // the loop (a delete each, on the event loop's connection, was a commit flushed to disk each: 12 ms
    // apiece on a loaded machine). A crash before it leaves them to be recomputed again, which changes
    // nothing.
    const done: string[] = [];
    try {
      const left: LateMark[] = [];
      for (const mark of await coverage.lateMarks(LATE_MARKS_A_PASS)) {
        if (this.countedAlready(mark)) done.push(mark.id);
        else left.push(mark);
      }
      for (const { mark, ids } of byTopic(left)) {
        if (!(await inTime())) return true;
        // Not done: the first mark now holds what is left of them all (late), the others go.
        if (await this.late(mark)) {
          marksLeft = true;
          done.push(...ids.slice(1));
        } else done.push(...ids);
      }
    } finally {
      await coverage.dropLate(done);
      this.deps.rollups.forgetNotes(done);
    }
    // New topics are registered together: one commit and one flush for up to 200 of them (one each
    // was 100 flushes, each waking the thread pool, when a bench's 100 fresh topics appeared at once).
    const uncovered = await coverage.uncoveredNumericTopics(ROLLUP_UNITS_US[0], 200);
    await this.pauseAfterSlice();
    await coverage.registerAll(
      uncovered.map((topic) => ({ series: { topicId: topic.topicId, field: '' }, firstUs: topic.firstUs })),
      ROLLUP_UNITS_US,
    );
    for (;;) {
      const behind = await coverage.behind(horizonUs, SMALLEST_UNIT_US, 50);
      if (behind.length === 0) return marksLeft;
      for (const series of behind) {
        if (!(await inTime())) return true;
        const to = Math.min(series.toUs + STEP_US, floorTo(horizonUs, series.unit));
        await this.forward(series, to);
        await coverage.move(series, { fromUs: series.fromUs, toUs: to });
      }
    }
  }

  /**
   * Once the job has held the event loop for `sliceMs`, a pause until the loop's next check phase
   * (setImmediate: the requests that arrived meanwhile are read and started first). The pause is added
   * to `pausedMs`, which the budget does not count.
   */
  private async pauseAfterSlice(): Promise<void> {
    const now = performance.now();
    if (now - this.sliceStart < this.sliceMs) return;
    await new Promise<void>((resolve) => setImmediate(resolve));
    this.sliceStart = performance.now();
    this.pausedMs += this.sliceStart - now;
  }

  /**
   * Rolls a series forward to `toUs` from the raw values. (Building coarser units from the finer rollups
   * stalled SQLite's writer during bulk loads; until that is understood every unit reads raw values.)
   */
  private async forward(series: StoredCoverage, toUs: number): Promise<void> {
    await this.fill(series, series.toUs, toUs);
  }

  /**
   * Read in pieces (RollupStore.fillInPieces) with a pause between them, as late values are: read whole, a step
   * was one statement on the event loop over up to six hours of a unit's raw values (in the soak, the
   * minutes of a topic of 750 values a second took 17-35 ms each; an hour of a 1 kHz signal is 3.6 million
   * rows).
   */
  private async fill(series: StoredCoverage, fromUs: number, toUs: number): Promise<void> {
    if (toUs <= fromUs) return;
    this.stats.steps++;
    this.stats.units += (toUs - fromUs) / series.unit;
    await this.deps.rollups.store.fillInPieces(series, series.unit, fromUs, toUs, () =>
      this.pauseAfterSlice(),
    );
  }

  /**
   * Whether a late note's values are all counted already: written by this process with its commit's
   * number, and that commit handed to the writer before the settle of the topic's last recomputation
   * (`late`), which read every value of it in the note's range. The job reads the notes first and the
   * values later, and a note is written up to 100 ms after its commit (late-notes.ts): a backfill's commit
   * that landed in between was counted by the recomputation, and its note, read by the next pass, would
   * otherwise lie at or before the unit's last value and recompute the unit whole, from every value in it
   * (in the soak, up to 60,000 rows a pass, 1.5 s of statements a minute, each pass racing the next commit).
   */
  private countedAlready(mark: LateMark): boolean {
    const seq = this.deps.rollups.noteCommit(mark.id);
    if (seq === undefined) return false;
    const counted = this.counted.get(topicKey(mark));
    if (!counted || seq > counted.seq || mark.fromUs < counted.fromUs || mark.toUs >= counted.toUs)
      return false;
    this.stats.lateCounted++;
    return true;
  }

  /**
   * One step of a late mark: its latest six hours recomputed in every covered series of its topic (and
   * coverage extended down to them when they lie before it); the rest of the mark stays for later steps.
   * Answers whether some is left (then stored as the mark's range); a mark recomputed whole is left for
   * the caller to delete.
   */
  private async late(mark: LateMark): Promise<boolean> {
    const coverage = this.deps.rollups.coverage;
    this.stats.lateMarks++;
    // Every commit handed over before this settle is read below (a note of one is `countedAlready`),
    // and the topic it wrote is the one looked up now.
    const seq = this.deps.handedOver?.();
    await this.deps.settle();
    const topicId = await coverage.topicId(mark.organizationId, mark.path);
    // Finest first: a coarser unit is then built from the finer units just recomputed.
    const covered =
      topicId === undefined ? [] : (await coverage.ofTopic(topicId)).sort((a, b) => a.unit - b.unit);
    // Nothing of the topic is rolled up (yet): what the job rolls up later reads the values as they are.
    if (covered.length === 0) return false;
    const stepFrom = Math.max(mark.fromUs, mark.toUs + 1 - STEP_US);
    const recomputed: StoredCoverage[] = [];
    for (const series of covered) {
      const { unit } = series;
      const from = floorTo(stepFrom, unit);
      const to = Math.min(ceilTo(mark.toUs + 1, unit), series.toUs);
      if (from < series.fromUs) {
        // Before the coverage: filled from here up to it, and covered from here on.
        await this.recompute(series, from, Math.max(to, series.fromUs), mark.fromUs, recomputed);
        await coverage.move(series, { fromUs: from, toUs: series.toUs });
        recomputed.push({ ...series, fromUs: from });
      } else {
        await this.recompute(series, from, to, mark.fromUs, recomputed);
        recomputed.push(series);
      }
    }
    // Each series read every value at or after stepFrom up to the end of the unit the mark ends in (the
    // unit it starts in from its last value on, `fillLate`) or to its coverage's end, beyond which the
    // job rolls forward later: the finest series' unit ends first.
    const key = topicKey(mark);
    if (seq === undefined) this.counted.delete(key);
    else {
      if (this.counted.size >= MAX_COUNTED_TOPICS) this.counted.clear();
      const toUs = Math.min(...covered.map((series) => ceilTo(mark.toUs + 1, series.unit)));
      this.counted.set(key, { seq, fromUs: stepFrom, toUs });
    }
    if (stepFrom <= mark.fromUs) return false;
    await coverage.shrinkLate(mark, stepFrom - 1);
    return true;
  }

  /**
   * The units of [fromUs, toUs) of a series recomputed for late values: from the coarsest finer series of
   * the same numbers that answers for the whole range (twelve five-minute units for an hour), else from
   * the raw values in pieces of about a slice's time with a pause for the event loop between them, the
   * unit the earliest late value (`lateFromUs`) lies in only extended by its new values when it can be
   * (`RollupStore.fillLate`). Recomputing an hour from its values on every tick of a backfill into it read
   * a growing hour each second (the soak's late MQTT values: 45 ms statements on the event loop after 8
   * minutes).
   */
  private async recompute(
    series: StoredCoverage,
    fromUs: number,
    toUs: number,
    lateFromUs: number,
    finer: readonly StoredCoverage[],
  ): Promise<void> {
    if (toUs <= fromUs) return;
    const { unit } = series;
    const source = finer
      .filter(
        (f) =>
          f.field === series.field &&
          f.unit < unit &&
          unit % f.unit === 0 &&
          f.fromUs <= fromUs &&
          f.toUs >= toUs,
      )
      .sort((a, b) => b.unit - a.unit)[0];
    this.stats.steps++;
    this.stats.units += (toUs - fromUs) / unit;
    const store = this.deps.rollups.store;
    if (source) {
      this.stats.builtFromFiner++;
      await store.fillFromFiner(series, unit, fromUs, toUs, source.unit);
    } else {
      const between = () => this.pauseAfterSlice();
      if (await store.fillLate(series, unit, fromUs, toUs, lateFromUs, between)) this.stats.lateTails++;
    }
  }
}
