import { type Kysely, sql } from 'kysely';
import { inReadSnapshot } from '../../../storage/read-snapshot.js';
import type { Database } from '../../../storage/tables.js';
import { isPostgres } from '../../../storage/value-lists.js';
import { addSlice, bucketAverage, type NumberBucket } from '../historian/segments/decoded/number-buckets.js';
import {
  type HistoryRow,
  mergeHistory,
  segmentNumbers,
  segmentValues,
} from '../historian/segments/segment-reads.js';

export interface RangeQuery {
  topicId: number;
  fromUs: number;
  toUs: number;
  order: 'asc' | 'desc';
  limit: number;
  /** Exclusive keyset bound: the last timestamp of the previous page. */
  afterUs: number | null;
}

export interface BucketRow {
  bucketStartUs: number;
  count: number;
  avg: number;
  min: number;
  max: number;
  first: number;
  last: number;
}

/** Historian reads: ranges, buckets and latest values. Plain rows; nothing HTTP. */
export class DataRepository {
  /** `settle` resolves once every committed value can be read (HistorianWrites.settle). */
  constructor(
    private readonly db: Kysely<Database>,
    private readonly settle: () => Promise<void> = async () => {},
  ) {}

  /**
   * One page of a topic's values in declared-time order, `limit + 1` rows to tell whether more follow:
   * the rows of `uns_values` merged with the values of the compressed segments the range overlaps.
   */
  async range(query: RangeQuery): Promise<HistoryRow[]> {
    await this.settle();
    let q = this.db
      .selectFrom('uns_values')
      .select(['ts_us', 'value_json', 'quality', 'source', 'received_us'])
      .where('topic_id', '=', query.topicId)
      .where('ts_us', '>=', query.fromUs)
      .where('ts_us', '<', query.toUs);
    if (query.afterUs !== null) q = q.where('ts_us', query.order === 'asc' ? '>' : '<', query.afterUs);
    const rows = await q
      .orderBy('ts_us', query.order)
      .limit(query.limit + 1)
      .execute();
    const segments = await segmentValues(this.db, { ...query, limit: query.limit + 1 });
    return mergeHistory(rows, segments, query.order, query.limit + 1);
  }

  /**
   * Numeric values of a topic aggregated into buckets of `widthUs` from `fromUs`: count, avg, min, max
   * and the first and last value by declared time. Only non-empty buckets are returned. The first and
   * last values are looked up by primary key at each bucket's earliest and latest timestamp, which
   * reads alike on both dialects.
   */
  async buckets(topicId: number, fromUs: number, toUs: number, widthUs: number): Promise<BucketRow[]> {
    await this.settle();
    // The rows' aggregates, the segments and the rows that shadow segment values are read in one
    // snapshot: a late value merged into its segment (late-merges.ts), or a day compacted, between two of
    // these reads was counted twice (as the row and in the segment) or as the value it replaced.
    return inReadSnapshot(this.db, (db) => this.bucketsIn(db, topicId, fromUs, toUs, widthUs));
  }

  private async bucketsIn(
    db: Kysely<Database>,
    topicId: number,
    fromUs: number,
    toUs: number,
    widthUs: number,
  ): Promise<BucketRow[]> {
    const { rows } = await sql<{
      bucket: number;
      cnt: number;
      avg_v: number;
      min_v: number;
      max_v: number;
      first_v: number;
      last_v: number;
      first_ts: number;
      last_ts: number;
    }>`
      with b as (
        select cast((ts_us - ${fromUs}) / ${widthUs} as bigint) as bucket, count(*) as cnt, avg(value_num) as avg_v,
          min(value_num) as min_v, max(value_num) as max_v, min(ts_us) as first_ts, max(ts_us) as last_ts
        from uns_values
        where topic_id = ${topicId} and ts_us >= ${fromUs} and ts_us < ${toUs} and value_num is not null
        group by 1
      )
      select b.bucket, b.cnt, b.avg_v, b.min_v, b.max_v, b.first_ts, b.last_ts, f.value_num as first_v,
        l.value_num as last_v
      from b
      join uns_values f on f.topic_id = ${topicId} and f.ts_us = b.first_ts
      join uns_values l on l.topic_id = ${topicId} and l.ts_us = b.last_ts
      order by b.bucket`.execute(db);
    const buckets = new Map<number, NumberBucket>();
    for (const row of rows) {
      buckets.set(Number(row.bucket), {
        rowsAvg: Number(row.avg_v),
        cnt: Number(row.cnt),
        sum: Number(row.avg_v) * Number(row.cnt),
        error: 0,
        min: Number(row.min_v),
        max: Number(row.max_v),
        firstTs: Number(row.first_ts),
        first: Number(row.first_v),
        lastTs: Number(row.last_ts),
        last: Number(row.last_v),
      });
    }
    await addSegmentBuckets(db, buckets, topicId, fromUs, toUs, widthUs);
    return [...buckets.entries()]
      .sort((a, b) => a[0] - b[0])
      .map(([bucket, b]) => ({
        bucketStartUs: fromUs + bucket * widthUs,
        count: b.cnt,
        avg: bucketAverage(b),
        min: b.min,
        max: b.max,
        first: b.first,
        last: b.last,
      }));
  }

  /** Latest values of the organization's topics with paths in [from, to) (or equal to `exact`), after `afterPath`. */
  latestInRange(
    organizationId: string,
    bounds: { exact: string | null; from: string; to: string },
    afterPath: string | null,
    limit: number,
  ) {
    let q = this.db
      .selectFrom('uns_topics as t')
      .innerJoin('uns_latest as l', 'l.topic_id', 't.id')
      .select(['t.path', 'l.ts_us', 'l.value_json', 'l.quality', 'l.source', 'l.received_us'])
      .where('t.organization_id', '=', organizationId)
      .where((eb) =>
        eb.or([
          ...(bounds.exact ? [eb('t.path', '=', bounds.exact)] : []),
          eb.and([eb('t.path', '>=', bounds.from), eb('t.path', '<', bounds.to)]),
        ]),
      );
    if (afterPath !== null) q = q.where('t.path', '>', afterPath);
    return q.orderBy('t.path').limit(limit).execute();
  }

  /**
   * Every topic of the organization with its parent and when its latest value was received (epoch
   * microseconds; null: never), in one query (the dependency graph's unused topics).
   */
  async topicsWithLatestReceipt(
    organizationId: string,
  ): Promise<{ path: string; parentPath: string | null; receivedUs: number | null }[]> {
    await this.settle();
    const rows = await this.db
      .selectFrom('uns_topics as t')
      .leftJoin('uns_latest as l', 'l.topic_id', 't.id')
      .select(['t.path', 't.parent_path', 'l.received_us'])
      .where('t.organization_id', '=', organizationId)
      .execute();
    return rows.map((r) => ({
      path: r.path,
      parentPath: r.parent_path,
      receivedUs: r.received_us === null ? null : Number(r.received_us),
    }));
  }

  /** The latest value row of one topic, if it has one. */
  latestOf(topicId: number) {
    return this.db
      .selectFrom('uns_latest')
      .select(['ts_us', 'value_json', 'quality', 'source', 'received_us'])
      .where('topic_id', '=', topicId)
      .executeTakeFirst();
  }

  /** Violations recorded for a topic, newest first, keyset on (received time, id). */
  violations(topicId: number, after: { receivedUs: number; id: string } | null, limit: number) {
    let q = this.db
      .selectFrom('uns_violations')
      .select(['id', 'ts_us', 'kind', 'message', 'received_us'])
      .where('topic_id', '=', topicId);
    if (after) {
      q = q.where((eb) =>
        eb.or([
          eb('received_us', '<', after.receivedUs),
          eb.and([eb('received_us', '=', after.receivedUs), eb('id', '<', after.id)]),
        ]),
      );
    }
    return q
      .orderBy('received_us', 'desc')
      .orderBy('id', 'desc')
      .limit(limit + 1)
      .execute();
  }
}

/**
 * Adds the numeric values of the compressed segments in [fromUs, toUs) to `buckets`, straight from
 * their decoded columns; a timestamp that also has a row (a late value replacing one, not yet
 * compacted) counts once, as the row.
 */
async function addSegmentBuckets(
  db: Kysely<Database>,
  buckets: Map<number, NumberBucket>,
  topicId: number,
  fromUs: number,
  toUs: number,
  widthUs: number,
): Promise<void> {
  const slices = await segmentNumbers(db, topicId, fromUs, toUs);
  let firstUs = Number.POSITIVE_INFINITY;
  let lastUs = Number.NEGATIVE_INFINITY;
  for (const slice of slices) {
    firstUs = Math.min(firstUs, slice.firstUs);
    lastUs = Math.max(lastUs, slice.lastUs);
  }
  if (firstUs > lastUs) return;
  const shadowed = new Set(
    (
      await db
        .selectFrom('uns_values')
        .select('ts_us')
        .where('topic_id', '=', topicId)
        .where('ts_us', '>=', firstUs)
        .where('ts_us', '<=', lastUs)
        .execute()
    ).map((r) => Number(r.ts_us)),
  );
  const grid = { originUs: fromUs, widthUs, compensated: !isPostgres(db) };
  for (const slice of slices) addSlice(buckets, slice, grid, shadowed);
}
