import { type Kysely, type RawBuilder, sql } from 'kysely';
import type { DialectName } from '../../../storage/database.js';
import { type DurableWrite, directWrite } from '../../../storage/durable-write.js';
import type { Database } from '../../../storage/tables.js';
import { heldBuckets, type NumberBucket, rangePieces } from './rollup-segments.js';
import { fieldPathParts, numericMember } from './value-member.js';

/** One series of rollups: a topic's numbers (field '') or the numbers at a field path inside its object values. */
export interface RollupSeries {
  topicId: number;
  field: string;
}

/** A bucket's partial aggregate, from rollups or raw values. */
export interface PartialBucket {
  cnt: number;
  sum: number;
  min: number;
  max: number;
  firstTs: number;
  first: number;
  lastTs: number;
  last: number;
}

interface AggregateRow {
  bucket: number;
  cnt: number;
  sum_v: number;
  min_v: number;
  max_v: number;
  first_ts: number;
  first_v: number;
  last_ts: number;
  last_v: number;
}

/**
 * PostgreSQL: the range again on a joined side, so that it prunes the partitions (days) of `uns_values`
 * by literal bounds when it plans, and the first and last value lookups probe the days of the range,
 * not every day. (SQLite looks them up by primary key; the bounds made it plan a range scan instead.)
 */
function within(dialect: DialectName, alias: string, fromUs: number, toUs: number) {
  if (dialect === 'sqlite') return sql``;
  return sql`and ${sql.ref(`${alias}.ts_us`)} >= ${sql.lit(fromUs)} and ${sql.ref(`${alias}.ts_us`)} < ${sql.lit(toUs)}`;
}

/**
 * Most stored rows one read of raw values covers (fillInPieces): a statement over them takes a few
 * milliseconds on SQLite, where each statement holds the event loop.
 */
export const PIECE_ROWS = 5000;

export const floorTo = (us: number, unit: number) => Math.floor(us / unit) * unit;
export const ceilTo = (us: number, unit: number) => Math.ceil(us / unit) * unit;

/**
 * The SQL of rollups: computing units from `uns_values` into `uns_rollups`, and reading buckets from
 * rollups or from raw values. Numbers are `value_num` for field '' and the numeric member at the field
 * path otherwise (value-member.ts); the first and last values are looked up by primary key at each
 * bucket's earliest and latest timestamp, as the historian's bucket query does.
 */
export class RollupStore {
  constructor(
    readonly db: Kysely<Database>,
    private readonly dialect: DialectName,
    /** For the units' writes (Storage.durableWrite): derived data, but stored as any commit is. */
    private readonly write: DurableWrite = directWrite(db),
  ) {}

  private number(alias: string, field: string): RawBuilder<number | null> {
    return numericMember(this.dialect, alias, fieldPathParts(field));
  }

  /**
   * Recomputes the rollups of the units in [fromUs, toUs) of one series from `uns_values`: read first,
   * then written in a short transaction. (A transaction that held `meridian.db`'s write lock while it read
   * the historian file stalled against the SQLite historian thread, whose commits lock both files.)
   */
  async fill(series: RollupSeries, unit: number, fromUs: number, toUs: number): Promise<void> {
    if (toUs <= fromUs) return;
    const parts = new Map<number, PartialBucket>();
    await this.rawInto(parts, series, fromUs, toUs, unit);
    await this.store(series, unit, fromUs, toUs, parts);
  }

  /**
   * `fill` from the raw values read in pieces of at most PIECE_ROWS stored rows, `between` awaited between
   * two pieces: on SQLite each read is a synchronous statement on the event loop, and one over a unit of
   * dense values (a minute of a 1 kHz backfill: 60,000 rows) held every request for 20-30 ms. Each piece
   * ends where an index walk from its start finds its PIECE_ROWS-th row, so a sparse stretch is one read
   * however long, and a dense one after it is still cut (pieces sized by how long the last one took grew
   * eightfold a piece over an empty stretch, and then read the dense minute after it whole).
   */
  async fillInPieces(
    series: RollupSeries,
    unit: number,
    fromUs: number,
    toUs: number,
    between: () => Promise<unknown>,
  ): Promise<void> {
    if (toUs <= fromUs) return;
    const parts = new Map<number, PartialBucket>();
    for (let at = fromUs; at < toUs; ) {
      if (at > fromUs) await between();
      const end = await this.pieceEnd(series.topicId, at, toUs);
      await this.rawInto(parts, series, at, end, unit);
      at = end;
    }
    await this.store(series, unit, fromUs, toUs, parts);
  }

  /** Where a piece of raw values from `fromUs` ends: at its PIECE_ROWS-th stored row after the first, or `toUs`. */
  private async pieceEnd(topicId: number, fromUs: number, toUs: number): Promise<number> {
    const row = await this.db
      .selectFrom('uns_values')
      .select('ts_us')
      .where('topic_id', '=', topicId)
      .where('ts_us', '>=', fromUs)
      .where('ts_us', '<', toUs)
      .orderBy('ts_us')
      .limit(1)
      .offset(PIECE_ROWS)
      .executeTakeFirst();
    return row === undefined ? toUs : Number(row.ts_us);
  }

  /**
   * `fillInPieces` for the units late values landed in, `lateFromUs` the earliest of them. The unit that
   * holds it, when stored with its last value before it, counted none of the late values, and what it did
   * count is as it was (a value changed at or before its last one is a late value there, whose mark
   * recomputes the unit whole): only its values after its last one are read, and added to it. A backfill
   * that fills a minute over a minute (the soak's late MQTT values, 750 a second into one topic) then
   * reads each value once instead of the whole growing minute every second: on PostgreSQL that was up to
   * 60,000 rows a tick, and the job's reads took the database's time from every request by the fourth
   * minute. Answers whether the unit was extended so.
   */
  async fillLate(
    series: RollupSeries,
    unit: number,
    fromUs: number,
    toUs: number,
    lateFromUs: number,
    between: () => Promise<unknown>,
  ): Promise<boolean> {
    if (toUs <= fromUs) return false;
    const start = floorTo(lateFromUs, unit);
    const stored = start >= fromUs && start < toUs ? await this.storedUnit(series, unit, start) : undefined;
    if (!stored || stored.lastTs >= lateFromUs) {
      await this.fillInPieces(series, unit, fromUs, toUs, between);
      return false;
    }
    await this.fillInPieces(series, unit, fromUs, start, between);
    const parts = new Map([[start, stored]]);
    await this.rawInto(parts, series, stored.lastTs + 1, start + unit, unit);
    await this.store(series, unit, start, start + unit, parts);
    await this.fillInPieces(series, unit, start + unit, toUs, between);
    return true;
  }

  /** The stored unit of a series that starts at `startUs`, if any. */
  private async storedUnit(
    series: RollupSeries,
    unit: number,
    startUs: number,
  ): Promise<PartialBucket | undefined> {
    const row = await this.db
      .selectFrom('uns_rollups')
      .select(['cnt', 'sum_v', 'min_v', 'max_v', 'first_ts', 'first_v', 'last_ts', 'last_v'])
      .where('topic_id', '=', series.topicId)
      .where('field', '=', series.field)
      .where('width_us', '=', unit)
      .where('start_us', '=', startUs)
      .executeTakeFirst();
    return row && toPartial({ bucket: 0, ...row });
  }

  /**
   * Recomputes the units of `unit` in [fromUs, toUs) from the stored rollups of `finerUnit` (a divisor of
   * it), which must answer for the whole range: an hour is its twelve five-minute units instead of every
   * value in it.
   */
  async fillFromFiner(
    series: RollupSeries,
    unit: number,
    fromUs: number,
    toUs: number,
    finerUnit: number,
  ): Promise<void> {
    if (toUs <= fromUs) return;
    const parts = new Map<number, PartialBucket>();
    await this.rolledInto(parts, series, finerUnit, fromUs, toUs, unit);
    await this.store(series, unit, fromUs, toUs, parts);
  }

  /** Replaces the stored units of [fromUs, toUs) of a series with `units` (by their start), in one short transaction. */
  private async store(
    series: RollupSeries,
    unit: number,
    fromUs: number,
    toUs: number,
    units: Iterable<[number, PartialBucket]>,
  ): Promise<void> {
    const { topicId, field } = series;
    const values = [...units].map(([start, p]) => ({
      topic_id: topicId,
      field,
      width_us: unit,
      start_us: start,
      cnt: p.cnt,
      sum_v: p.sum,
      min_v: p.min,
      max_v: p.max,
      first_ts: p.firstTs,
      first_v: p.first,
      last_ts: p.lastTs,
      last_v: p.last,
    }));
    await this.write((db) =>
      db.transaction().execute(async (trx) => {
        await trx
          .deleteFrom('uns_rollups')
          .where('topic_id', '=', topicId)
          .where('field', '=', field)
          .where('width_us', '=', unit)
          .where('start_us', '>=', fromUs)
          .where('start_us', '<', toUs)
          .execute();
        for (let i = 0; i < values.length; i += 1000) {
          await trx
            .insertInto('uns_rollups')
            .values(values.slice(i, i + 1000))
            .onConflict((oc) =>
              oc.columns(['topic_id', 'field', 'width_us', 'start_us']).doUpdateSet((eb) => ({
                cnt: eb.ref('excluded.cnt'),
                sum_v: eb.ref('excluded.sum_v'),
                min_v: eb.ref('excluded.min_v'),
                max_v: eb.ref('excluded.max_v'),
                first_ts: eb.ref('excluded.first_ts'),
                first_v: eb.ref('excluded.first_v'),
                last_ts: eb.ref('excluded.last_ts'),
                last_v: eb.ref('excluded.last_v'),
              })),
            )
            .execute();
        }
      }),
    );
  }

  /** The units of `unit` counted from `originUs` of the rows (only) in [fromUs, toUs), by SQL. */
  private async rowUnits(
    series: RollupSeries,
    unit: number,
    originUs: number,
    fromUs: number,
    toUs: number,
  ): Promise<AggregateRow[]> {
    const { topicId, field } = series;
    const v = this.number('v', field);
    const { rows } = await sql<AggregateRow>`
      with b as (
        select cast((v.ts_us - ${sql.lit(originUs)}) / ${sql.lit(unit)} as bigint) as bucket, count(*) as cnt,
          sum(${v}) as sum_v, min(${v}) as min_v, max(${v}) as max_v,
          min(v.ts_us) as first_ts, max(v.ts_us) as last_ts
        from uns_values v
        where v.topic_id = ${sql.lit(topicId)} and v.ts_us >= ${sql.lit(fromUs)} and v.ts_us < ${sql.lit(toUs)}
          and ${v} is not null
        group by 1
      )
      select b.bucket, b.cnt, b.sum_v, b.min_v, b.max_v, b.first_ts, ${this.number('f', field)} as first_v, b.last_ts,
        ${this.number('l', field)} as last_v
      from b
      join uns_values f on f.topic_id = ${sql.lit(topicId)} and f.ts_us = b.first_ts ${within(this.dialect, 'f', fromUs, toUs)}
      join uns_values l on l.topic_id = ${sql.lit(topicId)} and l.ts_us = b.last_ts ${within(this.dialect, 'l', fromUs, toUs)}`.execute(
      this.db,
    );
    return rows;
  }

  /** Adds the rollups of [fromUs, toUs) (whole units) to their buckets of `widthUs`. */
  async rolledInto(
    parts: Map<number, PartialBucket>,
    series: RollupSeries,
    unit: number,
    fromUs: number,
    toUs: number,
    widthUs: number,
  ): Promise<void> {
    const { topicId, field } = series;
    const origin = floorTo(fromUs, widthUs);
    // Each unit's row by its primary key: correlated lookups, which PostgreSQL plans as index probes even
    // before it has statistics of the table (a join was planned as a scan per bucket).
    const unitIs = (alias: string, start: string) =>
      sql`${sql.ref(`${alias}.topic_id`)} = ${sql.lit(topicId)} and ${sql.ref(`${alias}.field`)} = ${field} and ${sql.ref(`${alias}.width_us`)} = ${sql.lit(unit)} and ${sql.ref(`${alias}.start_us`)} = ${sql.ref(start)}`;
    const { rows } = await sql<AggregateRow>`
      with b as (
        select cast((start_us - ${sql.lit(origin)}) / ${sql.lit(widthUs)} as bigint) as bucket, sum(cnt) as cnt,
          sum(sum_v) as sum_v, min(min_v) as min_v, max(max_v) as max_v, min(start_us) as first_unit,
          max(start_us) as last_unit
        from uns_rollups
        where topic_id = ${sql.lit(topicId)} and field = ${field} and width_us = ${sql.lit(unit)}
          and start_us >= ${sql.lit(fromUs)} and start_us < ${sql.lit(toUs)}
        group by 1
      )
      select b.bucket, b.cnt, b.sum_v, b.min_v, b.max_v,
        (select f.first_ts from uns_rollups f where ${unitIs('f', 'b.first_unit')}) as first_ts,
        (select f.first_v from uns_rollups f where ${unitIs('f', 'b.first_unit')}) as first_v,
        (select l.last_ts from uns_rollups l where ${unitIs('l', 'b.last_unit')}) as last_ts,
        (select l.last_v from uns_rollups l where ${unitIs('l', 'b.last_unit')}) as last_v
      from b`.execute(this.db);
    addRows(parts, rows, origin, widthUs);
  }

  /** Adds the raw values of [fromUs, toUs) to their buckets of `widthUs`. */
  async rawInto(
    parts: Map<number, PartialBucket>,
    series: RollupSeries,
    fromUs: number,
    toUs: number,
    widthUs: number,
  ): Promise<void> {
    if (toUs <= fromUs) return;
    const origin = floorTo(fromUs, widthUs);
    for (const piece of await rangePieces(this.db, series.topicId, fromUs, toUs)) {
      if (!piece.segments) {
        addRows(
          parts,
          await this.rowUnits(series, widthUs, origin, piece.fromUs, piece.toUs),
          origin,
          widthUs,
        );
        continue;
      }
      const held = await heldBuckets(this.db, series, piece, origin, widthUs, this.dialect === 'sqlite');
      addRows(
        parts,
        [...held].map(([u, b]) => fromHeld(u, b)),
        origin,
        widthUs,
      );
    }
  }
}

function addRows(parts: Map<number, PartialBucket>, rows: AggregateRow[], origin: number, widthUs: number) {
  for (const row of rows) {
    add(parts, origin + Number(row.bucket) * widthUs, toPartial(row));
  }
}

function toPartial(row: AggregateRow): PartialBucket {
  return {
    cnt: Number(row.cnt),
    sum: Number(row.sum_v),
    min: Number(row.min_v),
    max: Number(row.max_v),
    firstTs: Number(row.first_ts),
    first: Number(row.first_v),
    lastTs: Number(row.last_ts),
    last: Number(row.last_v),
  };
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

/** A bucket computed from segments as the row SQL answers it (its compensated sum folded in). */
function fromHeld(bucket: number, b: NumberBucket): AggregateRow {
  return {
    bucket,
    cnt: b.cnt,
    sum_v: b.sum + b.error,
    min_v: b.min,
    max_v: b.max,
    first_ts: b.firstTs,
    first_v: b.first,
    last_ts: b.lastTs,
    last_v: b.last,
  };
}
