import { type Kysely, sql } from 'kysely';
import type { Database } from '../../../storage/tables.js';
import type { CommitJob } from '../historian/historian-writer.js';
import type { BucketRow } from './data.repository.js';

const MINUTE_US = 60_000_000;
const FIVE_MINUTES_US = 300_000_000;
const HOUR_US = 3_600_000_000;
/**
 * Rollup units, coarsest first: a bucket width that is a multiple of one is built from its rollups (the
 * nice widths of 5, 10, 15 and 30 minutes from five-minute units: 30 days of them are 8,640 rows a topic).
 */
export const ROLLUP_UNITS_US = [HOUR_US, FIVE_MINUTES_US, MINUTE_US] as const;

/**
 * The bus topic on which a replica announces the late values it committed (values in minutes that have
 * ended, which another replica may have rolled up already). Event ids are `lateValueAnnouncements`' JSON.
 */
export const LATE_VALUES_TOPIC = 'uns.rollups.late';
/** An announcement's JSON stays far below PostgreSQL's 8,000-byte NOTIFY payload; beyond it, `all`. */
const MAX_ANNOUNCEMENT_CHARS = 6000;
/** A span told of more dirty units than this is forgotten (refilled whole by its next query). */
const MAX_HEARD_UNITS = 10_000;

interface LateAnnouncement {
  /** Organization id. */
  o: string;
  /** Topic path, earliest and latest late timestamp (µs). */
  t?: [string, number, number][];
  /** Too many topics to name: every span of the organization is forgotten. */
  all?: true;
}

/**
 * The late values of a commit (timestamps before `closedBeforeUs`, the start of the current minute), one
 * announcement per organization: each topic with its earliest and latest late timestamp. Live values (in
 * the current minute) cost one comparison each and announce nothing.
 */
export function lateValueAnnouncements(jobs: readonly CommitJob[], closedBeforeUs: number): string[] {
  const out: string[] = [];
  for (const job of jobs) {
    let ranges: Map<string, [number, number]> | undefined;
    for (const { record } of job.records) {
      const ts = record.timestampUs;
      if (ts >= closedBeforeUs) continue;
      ranges ??= new Map();
      const range = ranges.get(record.topic);
      if (!range) ranges.set(record.topic, [ts, ts]);
      else {
        if (ts < range[0]) range[0] = ts;
        if (ts > range[1]) range[1] = ts;
      }
    }
    if (!ranges) continue;
    const named: LateAnnouncement = {
      o: job.organizationId,
      t: [...ranges].map(([path, [min, max]]) => [path, min, max]),
    };
    const json = JSON.stringify(named);
    out.push(json.length <= MAX_ANNOUNCEMENT_CHARS ? json : JSON.stringify({ o: job.organizationId, all: true }));
  }
  return out;
}

/** The contiguous span of units of one topic and unit width that `uns_rollups` answers for. */
interface Coverage {
  topicId: number;
  fromUs: number;
  toUs: number;
  /** Unit starts inside the span that a value landed in since they were rolled up. */
  dirty: Set<number>;
}

/** A bucket's partial aggregate, from rollups or raw values. */
interface PartialBucket {
  cnt: number;
  sum: number;
  min: number;
  max: number;
  firstTs: number;
  first: number;
  lastTs: number;
  last: number;
}

const floorTo = (us: number, unit: number) => Math.floor(us / unit) * unit;
const ceilTo = (us: number, unit: number) => Math.ceil(us / unit) * unit;

/**
 * Pre-aggregated history for wide time ranges. Each topic's numeric values are rolled up per minute, five
 * minutes and hour (count, sum, min, max, first and last with their timestamps) into `uns_rollups`, lazily: the
 * first query that needs a span of closed units (ended before now) fills it from `uns_values`, later
 * ones extend it. Nothing on the publish path writes rollups: once a commit is durable, `committed`
 * marks the rolled-up units its values landed in (late data, backfill) dirty in memory, an O(1) check a
 * value, and the next query that reads the topic recomputes those units first. The spans are kept in
 * memory: a new process starts with none and only reads rows it (re)wrote itself, since a fill first
 * deletes the rows of its span (rows left by an earlier process are never read, and are overwritten or
 * dropped by retention). Late values committed by another replica are heard over the invalidation bus
 * (`LATE_VALUES_TOPIC`, `heard`).
 *
 * `buckets` answers what `DataRepository.buckets` answers, except that buckets are aligned to
 * multiples of their width from the epoch (so a bucket is whole units): rollups for the units inside
 * the range, raw values for the open edges (before the first whole unit, after the last closed one).
 * Count, min, max, first and last equal the raw computation exactly; avg is the sum of the units' sums
 * over the count, which can differ from a single pass in the last bits of a double.
 */
export class HistorianRollups {
  /** By organization, then topic path, then unit width. */
  private readonly spans = new Map<string, Map<string, Map<number, Coverage>>>();
  /** Rollup maintenance and reads of one topic run one at a time (`topicId` -> tail of its chain). */
  private readonly locks = new Map<number, Promise<unknown>>();

  constructor(
    private readonly db: Kysely<Database>,
    private readonly settle: () => Promise<void>,
  ) {}

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
          for (const [unit, span] of units) {
            if (ts >= span.fromUs && ts < span.toUs) span.dirty.add(floorTo(ts, unit));
          }
        }
      }
    } catch {
      // Nothing above should throw; if it did, no span can be trusted any more.
      this.spans.clear();
    }
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
      for (const [unit, span] of units) {
        const from = floorTo(Math.max(minUs, span.fromUs), unit);
        const to = Math.min(maxUs, span.toUs - 1);
        if (to < from) continue;
        if ((to - from) / unit > MAX_HEARD_UNITS) {
          units.delete(unit);
          continue;
        }
        for (let start = from; start <= to; start += unit) span.dirty.add(start);
      }
    }
  }

  /** Retention: drops rollups of units that begin before `cutoffUs` and forgets every span. */
  async dropBefore(cutoffUs: number): Promise<void> {
    this.spans.clear();
    await this.db.deleteFrom('uns_rollups').where('start_us', '<', cutoffUs).execute();
  }

  /** Topic deletes: drops the topics' rollups (their spans are forgotten when the id no longer matches). */
  async dropTopics(topicIds: number[]): Promise<void> {
    for (let i = 0; i < topicIds.length; i += 1000) {
      await this.db
        .deleteFrom('uns_rollups')
        .where('topic_id', 'in', topicIds.slice(i, i + 1000))
        .execute();
    }
  }

  /**
   * Numeric values of a topic in buckets of `widthUs` aligned to the epoch, over [fromUs, toUs):
   * only non-empty buckets, each starting at its aligned start (the first may start before `fromUs`).
   */
  async buckets(
    topic: { organizationId: string; path: string; id: number },
    fromUs: number,
    toUs: number,
    widthUs: number,
    nowUs: number,
  ): Promise<BucketRow[]> {
    await this.settle();
    const unit = ROLLUP_UNITS_US.find((u) => widthUs % u === 0);
    const rolledFrom = unit === undefined ? 0 : ceilTo(fromUs, unit);
    const rolledTo = unit === undefined ? 0 : Math.min(floorTo(toUs, unit), floorTo(nowUs, unit));
    const parts = new Map<number, PartialBucket>();
    if (unit === undefined || rolledTo <= rolledFrom) {
      await this.rawInto(parts, topic.id, fromUs, toUs, widthUs);
    } else {
      await this.rawInto(parts, topic.id, fromUs, rolledFrom, widthUs);
      await this.withTopic(topic.id, async () => {
        await this.cover(topic, unit, rolledFrom, rolledTo);
        await this.rolledInto(parts, topic.id, unit, rolledFrom, rolledTo, widthUs);
      });
      await this.rawInto(parts, topic.id, rolledTo, toUs, widthUs);
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

  /** Makes `uns_rollups` answer for [fromUs, toUs) at `unit`: recomputes dirty units, fills what is missing. */
  private async cover(
    topic: { organizationId: string; path: string; id: number },
    unit: number,
    fromUs: number,
    toUs: number,
  ): Promise<void> {
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
    let span = units.get(unit);
    if (span && span.topicId !== topic.id) span = undefined;
    if (!span) {
      // Registered before the fill reads, so that a commit landing meanwhile marks its unit dirty.
      span = { topicId: topic.id, fromUs, toUs, dirty: new Set() };
      units.set(unit, span);
      await this.fill(topic.id, unit, fromUs, toUs);
      return;
    }
    const gaps: [number, number][] = [];
    if (fromUs < span.fromUs) gaps.push([fromUs, span.fromUs]);
    if (toUs > span.toUs) gaps.push([span.toUs, toUs]);
    span.fromUs = Math.min(span.fromUs, fromUs);
    span.toUs = Math.max(span.toUs, toUs);
    const dirty = [...span.dirty];
    span.dirty.clear();
    for (const [a, b] of gaps) await this.fill(topic.id, unit, a, b);
    for (const start of dirty.sort((a, b) => a - b)) await this.fill(topic.id, unit, start, start + unit);
  }

  /** Recomputes the rollups of the units in [fromUs, toUs) from `uns_values`. */
  private async fill(topicId: number, unit: number, fromUs: number, toUs: number): Promise<void> {
    await this.db.transaction().execute(async (trx) => {
      await trx
        .deleteFrom('uns_rollups')
        .where('topic_id', '=', topicId)
        .where('width_us', '=', unit)
        .where('start_us', '>=', fromUs)
        .where('start_us', '<', toUs)
        .execute();
      await sql`
        insert into uns_rollups (topic_id, width_us, start_us, cnt, sum_v, min_v, max_v, first_ts, first_v, last_ts, last_v)
        with b as (
          select cast((ts_us - ${sql.lit(fromUs)}) / ${sql.lit(unit)} as bigint) as u, count(*) as cnt,
            sum(value_num) as sum_v, min(value_num) as min_v, max(value_num) as max_v,
            min(ts_us) as first_ts, max(ts_us) as last_ts
          from uns_values
          where topic_id = ${sql.lit(topicId)} and ts_us >= ${sql.lit(fromUs)} and ts_us < ${sql.lit(toUs)}
            and value_num is not null
          group by 1
        )
        select ${sql.lit(topicId)}, ${sql.lit(unit)}, ${sql.lit(fromUs)} + b.u * ${sql.lit(unit)}, b.cnt, b.sum_v,
          b.min_v, b.max_v, b.first_ts, f.value_num, b.last_ts, l.value_num
        from b
        join uns_values f on f.topic_id = ${sql.lit(topicId)} and f.ts_us = b.first_ts
        join uns_values l on l.topic_id = ${sql.lit(topicId)} and l.ts_us = b.last_ts
        where true
        on conflict (topic_id, width_us, start_us) do update set cnt = excluded.cnt, sum_v = excluded.sum_v,
          min_v = excluded.min_v, max_v = excluded.max_v, first_ts = excluded.first_ts, first_v = excluded.first_v,
          last_ts = excluded.last_ts, last_v = excluded.last_v`.execute(trx);
    });
  }

  /** Adds the rollups of [fromUs, toUs) (whole units) to their buckets of `widthUs`. */
  private async rolledInto(
    parts: Map<number, PartialBucket>,
    topicId: number,
    unit: number,
    fromUs: number,
    toUs: number,
    widthUs: number,
  ): Promise<void> {
    const origin = floorTo(fromUs, widthUs);
    // Each unit's row by its primary key: correlated lookups, which PostgreSQL plans as index probes even
    // before it has statistics of the table (a join was planned as a scan per bucket).
    const unitIs = (alias: string, start: string) =>
      sql`${sql.ref(`${alias}.topic_id`)} = ${sql.lit(topicId)} and ${sql.ref(`${alias}.width_us`)} = ${sql.lit(unit)} and ${sql.ref(`${alias}.start_us`)} = ${sql.ref(start)}`;
    const { rows } = await sql<{
      bucket: number;
      cnt: number;
      sum_v: number;
      min_v: number;
      max_v: number;
      first_ts: number;
      first_v: number;
      last_ts: number;
      last_v: number;
    }>`
      with b as (
        select cast((start_us - ${sql.lit(origin)}) / ${sql.lit(widthUs)} as bigint) as bucket, sum(cnt) as cnt,
          sum(sum_v) as sum_v, min(min_v) as min_v, max(max_v) as max_v, min(start_us) as first_unit,
          max(start_us) as last_unit
        from uns_rollups
        where topic_id = ${sql.lit(topicId)} and width_us = ${sql.lit(unit)} and start_us >= ${sql.lit(fromUs)}
          and start_us < ${sql.lit(toUs)}
        group by 1
      )
      select b.bucket, b.cnt, b.sum_v, b.min_v, b.max_v,
        (select f.first_ts from uns_rollups f where ${unitIs('f', 'b.first_unit')}) as first_ts,
        (select f.first_v from uns_rollups f where ${unitIs('f', 'b.first_unit')}) as first_v,
        (select l.last_ts from uns_rollups l where ${unitIs('l', 'b.last_unit')}) as last_ts,
        (select l.last_v from uns_rollups l where ${unitIs('l', 'b.last_unit')}) as last_v
      from b`.execute(this.db);
    for (const row of rows) {
      add(parts, origin + Number(row.bucket) * widthUs, {
        cnt: Number(row.cnt),
        sum: Number(row.sum_v),
        min: Number(row.min_v),
        max: Number(row.max_v),
        firstTs: Number(row.first_ts),
        first: Number(row.first_v),
        lastTs: Number(row.last_ts),
        last: Number(row.last_v),
      });
    }
  }

  /** Adds the raw values of [fromUs, toUs) to their buckets of `widthUs`. */
  private async rawInto(
    parts: Map<number, PartialBucket>,
    topicId: number,
    fromUs: number,
    toUs: number,
    widthUs: number,
  ): Promise<void> {
    if (toUs <= fromUs) return;
    const origin = floorTo(fromUs, widthUs);
    const { rows } = await sql<{
      bucket: number;
      cnt: number;
      sum_v: number;
      min_v: number;
      max_v: number;
      first_ts: number;
      first_v: number;
      last_ts: number;
      last_v: number;
    }>`
      with b as (
        select cast((ts_us - ${sql.lit(origin)}) / ${sql.lit(widthUs)} as bigint) as bucket, count(*) as cnt,
          sum(value_num) as sum_v, min(value_num) as min_v, max(value_num) as max_v, min(ts_us) as first_ts,
          max(ts_us) as last_ts
        from uns_values
        where topic_id = ${sql.lit(topicId)} and ts_us >= ${sql.lit(fromUs)} and ts_us < ${sql.lit(toUs)}
          and value_num is not null
        group by 1
      )
      select b.bucket, b.cnt, b.sum_v, b.min_v, b.max_v, b.first_ts, f.value_num as first_v, b.last_ts,
        l.value_num as last_v
      from b
      join uns_values f on f.topic_id = ${sql.lit(topicId)} and f.ts_us = b.first_ts
      join uns_values l on l.topic_id = ${sql.lit(topicId)} and l.ts_us = b.last_ts`.execute(this.db);
    for (const row of rows) {
      add(parts, origin + Number(row.bucket) * widthUs, {
        cnt: Number(row.cnt),
        sum: Number(row.sum_v),
        min: Number(row.min_v),
        max: Number(row.max_v),
        firstTs: Number(row.first_ts),
        first: Number(row.first_v),
        lastTs: Number(row.last_ts),
        last: Number(row.last_v),
      });
    }
  }
}

function add(parts: Map<number, PartialBucket>, start: number, p: PartialBucket): void {
  const into = parts.get(start);
  if (!into) {
    parts.set(start, p);
    return;
  }
  into.cnt += p.cnt;
  into.sum += p.sum;
  into.min = Math.min(into.min, p.min);
  into.max = Math.max(into.max, p.max);
  if (p.firstTs < into.firstTs) {
    into.firstTs = p.firstTs;
    into.first = p.first;
  }
  if (p.lastTs > into.lastTs) {
    into.lastTs = p.lastTs;
    into.last = p.last;
  }
}
