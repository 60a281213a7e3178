import type { Kysely } from 'kysely';
import type { DialectName } from '../../../storage/database.js';
import { type DurableWrite, directWrite } from '../../../storage/durable-write.js';
import type { Database } from '../../../storage/tables.js';
import type { CommitJob } from '../historian/historian-writer.js';
import type { BucketRow } from '../reading/data.repository.js';
import { LateNotes } from './late-notes.js';
import { type LateAnnouncement, type LateRange, MAX_HEARD_UNITS } from './late-values.js';
import { RollupCoverage } from './rollup-coverage.js';
import { ceilTo, floorTo, type PartialBucket, RollupStore } from './rollup-store.js';

export { LATE_VALUES_TOPIC, lateValueAnnouncements } from './late-values.js';

const MINUTE_US = 60_000_000;
const FIVE_MINUTES_US = 300_000_000;
const HOUR_US = 3_600_000_000;
/** Numbered late notes kept (`noteSeqs`): a backfill writes about ten a second and topic. */
const MAX_NUMBERED_NOTES = 100_000;
/**
 * Rollup units, coarsest first: a bucket width that is a multiple of one is built from its rollups (the
 * nice widths of 5, 10, 15 and 30 minutes from five-minute units: 30 days of them are 8,640 rows a topic).
 */
export const ROLLUP_UNITS_US = [HOUR_US, FIVE_MINUTES_US, MINUTE_US] as const;

/** The contiguous span of units of one series and unit width that `uns_rollups` answers for here. */
interface Coverage {
  topicId: number;
  unit: number;
  fromUs: number;
  toUs: number;
  /** Unit starts inside the span that a value landed in since they were rolled up. */
  dirty: Set<number>;
}

/** A topic of an organization, and optionally a field path inside its object values ('' or none: the value). */
export interface RollupTopic {
  organizationId: string;
  path: string;
  id: number;
  field?: string;
}

/** What the reads of rollups had to compute themselves (the observable of the background job's use). */
export interface RollupReadStats {
  /** Spans filled whole from raw values: no rollups covered them yet. */
  coldFills: number;
  /** Spans taken over from the coverage the background job keeps (no fill). */
  adopted: number;
  /** Units computed by reads: cold fills, edges beyond the stored coverage, dirty units. */
  filledUnits: number;
}

/**
 * Pre-aggregated history for wide time ranges. Each series' numbers (a topic's numeric values, or the
 * numbers at a field path inside its object values) are rolled up per minute, five minutes and hour
 * (count, sum, min, max, first and last with their timestamps) into `uns_rollups`. The background job
 * (rollup-job.ts) keeps them ahead of queries and records what it covered in `uns_rollup_coverage`; a
 * read takes that coverage over and only computes what lies beyond it (the last minutes, a range the
 * job has not reached) and the units late values landed in. Without coverage, the first read of a span
 * fills it from `uns_values` (a cold fill). Nothing on the publish path writes rollups: once a commit is
 * durable, `committed` marks the units of this process's spans its values landed in dirty in memory,
 * an O(1) check a value, and the next read of the series recomputes them; values declared before the
 * job's horizon are also noted in `uns_rollup_late` (`noteLate`) for the job and for readers that take
 * coverage over. Late values committed by another replica are heard over the invalidation bus
 * (`LATE_VALUES_TOPIC`, `heard`).
 *
 * `buckets` answers what `DataRepository.buckets` answers, except that buckets are aligned to
 * multiples of their width from the epoch (so a bucket is whole units): rollups for the units inside
 * the range, raw values for the open edges (before the first whole unit, after the last closed one).
 * Count, min, max, first and last equal the raw computation exactly; avg is the sum of the units' sums
 * over the count, which can differ from a single pass in the last bits of a double.
 */
export class HistorianRollups {
  /** By organization, then topic path, then `field\0unit`. */
  private readonly spans = new Map<string, Map<string, Map<string, Coverage>>>();
  /** Rollup maintenance and reads of one topic run one at a time (`topicId` -> tail of its chain). */
  private readonly locks = new Map<number, Promise<unknown>>();
  /** Field series this process registered with the job already (`topicId\0field`). */
  private readonly registered = new Set<string>();
  /** Late values on their way to `uns_rollup_late` (`noteLate`). */
  private readonly notes: LateNotes;
  /**
   * The commit number (`LateRange.seq`) of the late notes this process wrote, by their row's id, until the
   * job drops them (`noteCommit`). Lost with the process: its notes are then recomputed as before.
   */
  private readonly noteSeqs = new Map<string, number>();
  readonly store: RollupStore;
  readonly coverage: RollupCoverage;
  readonly stats: RollupReadStats = { coldFills: 0, adopted: 0, filledUnits: 0 };

  constructor(
    db: Kysely<Database>,
    dialect: DialectName,
    private readonly settle: () => Promise<void>,
    // The job's and the late notes' writes (Storage.durableWrite): on SQLite their commits' disk flushes
    // held the event loop (in the soak, 7 ms on average and up to 207 ms a late note).
    write: DurableWrite = directWrite(db),
    /** Told when late values could not be noted (the job then leaves their units as they were). */
    onNoteError: (error: unknown) => void = () => {},
  ) {
    this.store = new RollupStore(db, dialect, write);
    this.coverage = new RollupCoverage(db, write);
    this.notes = new LateNotes(async (ranges, nowUs) => {
      const ids = await this.coverage.noteLate(ranges, nowUs);
      // Bounded: a job that stopped dropping notes (another replica's lease) leaves them unnumbered.
      if (this.noteSeqs.size > MAX_NUMBERED_NOTES) this.noteSeqs.clear();
      ranges.forEach((range, i) => {
        if (range.seq !== undefined) this.noteSeqs.set(ids[i]!, range.seq);
      });
    }, onNoteError);
  }

  /** The commit number of a late note this process wrote (`LateRange.seq`), if it knows one. */
  noteCommit(id: string): number | undefined {
    return this.noteSeqs.get(id);
  }

  /** Forgets the numbers of late notes the job dropped. */
  forgetNotes(ids: readonly string[]): void {
    for (const id of ids) this.noteSeqs.delete(id);
  }

  /** After a commit is durable: marks rolled-up units its values landed in dirty. Never throws. */
  committed(jobs: readonly CommitJob[]): void {
    if (this.spans.size === 0) return;
    try {
      for (const job of jobs) {
        const topics = this.spans.get(job.organizationId);
        if (!topics) continue;
        for (const { record } of job.records) {
          const units = topics.get(record.topic);
          if (!units) continue;
          const ts = record.timestampUs;
          for (const span of units.values()) {
            if (ts >= span.fromUs && ts < span.toUs) span.dirty.add(floorTo(ts, span.unit));
          }
        }
      }
    } catch {
      // Nothing above should throw; if it did, no span can be trusted any more.
      this.spans.clear();
    }
  }

  /**
   * Records late values for the job (after their commit, off the publish's answer), gathered per topic
   * while a write is in flight (late-notes.ts).
   */
  noteLate(ranges: readonly LateRange[], nowUs: number): void {
    this.notes.add(ranges, nowUs);
  }

  /** Resolves once the late values noted so far are written (or failed to be). */
  notesWritten(): Promise<void> {
    return this.notes.written();
  }

  /**
   * Another replica committed late values (`lateValueAnnouncements`): the units of this replica's spans
   * that they landed in are recomputed by the next query. Malformed announcements are ignored.
   */
  heard(announcement: string): void {
    let late: LateAnnouncement;
    try {
      late = JSON.parse(announcement) as LateAnnouncement;
    } catch {
      return;
    }
    const topics = this.spans.get(late.o);
    if (!topics) return;
    if (late.all) {
      this.spans.delete(late.o);
      return;
    }
    for (const [path, minUs, maxUs] of late.t ?? []) {
      const units = topics.get(path);
      if (!units) continue;
      for (const [key, span] of units) {
        if (!this.markDirty(span, minUs, maxUs)) units.delete(key);
      }
    }
  }

  /** Marks the units of [minUs, maxUs] inside a span dirty; false when too many to list (drop the span). */
  private markDirty(span: Coverage, minUs: number, maxUs: number): boolean {
    const from = floorTo(Math.max(minUs, span.fromUs), span.unit);
    const to = Math.min(maxUs, span.toUs - 1);
    if (to < from) return true;
    if ((to - from) / span.unit > MAX_HEARD_UNITS) return false;
    for (let start = from; start <= to; start += span.unit) span.dirty.add(start);
    return true;
  }

  /** Retention: drops rollups of units that begin before `cutoffUs` and forgets every span. */
  async dropBefore(cutoffUs: number): Promise<void> {
    this.spans.clear();
    await this.coverage.dropBefore(cutoffUs, ROLLUP_UNITS_US);
  }

  /** Topic deletes: drops the topics' rollups and coverage (spans are forgotten when the id no longer matches). */
  async dropTopics(topicIds: number[]): Promise<void> {
    await this.coverage.dropTopics(topicIds);
  }

  /**
   * Numbers of a series in buckets of `widthUs` aligned to the epoch, over [fromUs, toUs): only non-empty
   * buckets, each starting at its aligned start (the first may start before `fromUs`).
   */
  async buckets(
    topic: RollupTopic,
    fromUs: number,
    toUs: number,
    widthUs: number,
    nowUs: number,
  ): Promise<BucketRow[]> {
    await this.settle();
    const series = { topicId: topic.id, field: topic.field ?? '' };
    const unit = ROLLUP_UNITS_US.find((u) => widthUs % u === 0);
    const rolledFrom = unit === undefined ? 0 : ceilTo(fromUs, unit);
    const rolledTo = unit === undefined ? 0 : Math.min(floorTo(toUs, unit), floorTo(nowUs, unit));
    const parts = new Map<number, PartialBucket>();
    if (unit === undefined || rolledTo <= rolledFrom) {
      await this.store.rawInto(parts, series, fromUs, toUs, widthUs);
    } else {
      await this.store.rawInto(parts, series, fromUs, rolledFrom, widthUs);
      await this.withTopic(topic.id, async () => {
        await this.cover(topic, series.field, unit, rolledFrom, rolledTo);
        await this.store.rolledInto(parts, series, unit, rolledFrom, rolledTo, widthUs);
      });
      await this.store.rawInto(parts, series, rolledTo, toUs, widthUs);
      if (series.field !== '') await this.register(series);
    }
    return [...parts.entries()]
      .sort((a, b) => a[0] - b[0])
      .map(([start, p]) => ({
        bucketStartUs: start,
        count: p.cnt,
        avg: p.sum / p.cnt,
        min: p.min,
        max: p.max,
        first: p.first,
        last: p.last,
      }));
  }

  /** A field path read once is kept rolled up by the job from then on (from the topic's first value). */
  private async register(series: { topicId: number; field: string }): Promise<void> {
    const key = `${series.topicId}\u0000${series.field}`;
    if (this.registered.has(key)) return;
    const first = await this.coverage.firstTimestamp(series.topicId);
    if (first !== null) await this.coverage.register(series, ROLLUP_UNITS_US, first);
    this.registered.add(key);
  }

  private withTopic<T>(topicId: number, work: () => Promise<T>): Promise<T> {
    const previous = this.locks.get(topicId) ?? Promise.resolve();
    const run = previous.then(work, work);
    const tail = run.catch(() => undefined);
    this.locks.set(topicId, tail);
    void tail.then(() => {
      if (this.locks.get(topicId) === tail) this.locks.delete(topicId);
    });
    return run;
  }

  private async fill(topicId: number, field: string, unit: number, fromUs: number, toUs: number) {
    if (toUs <= fromUs) return;
    this.stats.filledUnits += (toUs - fromUs) / unit;
    await this.store.fill({ topicId, field }, unit, fromUs, toUs);
  }

  /**
   * Makes `uns_rollups` answer for [fromUs, toUs) at `unit`: takes over the job's coverage (and the late
   * values noted in it) or fills the span, then fills what is missing and recomputes dirty units.
   */
  private async cover(topic: RollupTopic, field: string, unit: number, fromUs: number, toUs: number) {
    let topics = this.spans.get(topic.organizationId);
    if (!topics) {
      topics = new Map();
      this.spans.set(topic.organizationId, topics);
    }
    let units = topics.get(topic.path);
    if (!units) {
      units = new Map();
      topics.set(topic.path, units);
    }
    const key = `${field}\u0000${unit}`;
    let span = units.get(key);
    if (span && span.topicId !== topic.id) span = undefined;
    if (!span) {
      // Registered before anything is read, so that a commit landing meanwhile marks its unit dirty.
      span = { topicId: topic.id, unit, fromUs, toUs, dirty: new Set() };
      units.set(key, span);
      const stored = await this.coverage.find({ topicId: topic.id, field }, unit);
      if (!stored || stored.toUs <= stored.fromUs || stored.toUs < fromUs || stored.fromUs > toUs) {
        this.stats.coldFills++;
        await this.fill(topic.id, field, unit, fromUs, toUs);
        return;
      }
      this.stats.adopted++;
      span.fromUs = stored.fromUs;
      span.toUs = stored.toUs;
      // Late values the job has not recomputed yet: the part of the span they reach is recomputed here
      // (those of commits before the span was registered written first), each unit once however many
      // marks reach it (a backfill notes its topic ten times a second).
      await this.notesWritten();
      const reached = (await this.coverage.lateMarks(10_000, topic))
        .map((mark): [number, number] => [
          floorTo(Math.max(mark.fromUs, stored.fromUs), unit),
          Math.min(ceilTo(mark.toUs + 1, unit), stored.toUs),
        ])
        .filter(([from, to]) => from < to)
        .sort((a, b) => a[0] - b[0]);
      for (const [from, to] of mergedRanges(reached)) await this.fill(topic.id, field, unit, from, to);
    }
    const gaps: [number, number][] = [];
    if (fromUs < span.fromUs) gaps.push([fromUs, span.fromUs]);
    if (toUs > span.toUs) gaps.push([span.toUs, toUs]);
    span.fromUs = Math.min(span.fromUs, fromUs);
    span.toUs = Math.max(span.toUs, toUs);
    const dirty = [...span.dirty];
    span.dirty.clear();
    for (const [a, b] of gaps) await this.fill(topic.id, field, unit, a, b);
    for (const start of dirty.sort((a, b) => a - b))
      await this.fill(topic.id, field, unit, start, start + unit);
  }
}

/** Ranges sorted by their start, those that overlap or touch merged into one. */
function mergedRanges(sorted: readonly [number, number][]): [number, number][] {
  const out: [number, number][] = [];
  for (const [from, to] of sorted) {
    const last = out.at(-1);
    if (last && from <= last[1]) last[1] = Math.max(last[1], to);
    else out.push([from, to]);
  }
  return out;
}
