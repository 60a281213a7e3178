import { type Kysely, sql } from 'kysely';
import type { DialectName } from '../../../../storage/database.js';
import type { Database } from '../../../../storage/tables.js';
import { DAY_US } from '../historian-layout.js';
import { type DayFingerprint, fingerprintOf } from './day-fingerprint.js';
import { decodeSegment, encodeSegment, type SegmentRow } from './segment-codec.js';
import { hasRowsBefore, type SeriesToCompact, seriesBefore } from './series-before.js';

/** The first key of the advisory locks that serialize compactions of a topic (issue 38). */
const SEGMENT_LOCK_CLASS = 38038;

export const NO_FIGURES: CompactionFigures = { values: 0, segments: 0, rowBytes: 0, segmentBytes: 0 };

/**
 * A topic-day read and encoded on one connection, for a transaction on another to move
 * (SqliteHistorianThread.commitCompaction): that transaction deletes the day's rows and writes `data` as
 * its segment only if the rows' fingerprint and the segment are still those read.
 */
export interface PreparedDay {
  topicId: number;
  dayUs: number;
  rowsFingerprint: DayFingerprint;
  /** The segment the rows were merged into, as read (null: there was none). */
  segmentRead: Uint8Array | null;
  data: Uint8Array;
  firstUs: number;
  lastUs: number;
  valueCount: number;
  /** The bytes every row the segment now holds took as a row. */
  rowBytes: number;
  /** What moving the day does. */
  figures: CompactionFigures;
}

/** What compacting did (or, in a dry run, would do). */
export interface CompactionFigures {
  values: number;
  segments: number;
  /** What the values took as rows: the bytes of their columns (an estimate; indexes and pages add more). */
  rowBytes: number;
  segmentBytes: number;
}

type StoredRow = {
  ts_us: number | string;
  value_json: string;
  quality: number;
  source: string | null;
  received_us: number | string;
};

/** The UTC day (its start, epoch µs) of a timestamp, before 1970 too. */
export function dayOf(tsUs: number): number {
  return tsUs - (((tsUs % DAY_US) + DAY_US) % DAY_US);
}

/** The bytes a row's columns take (topic id, times, value text and number, quality, source). */
export function rowBytes(row: SegmentRow): number {
  return (
    8 * 4 + 2 + Buffer.byteLength(row.valueJson) + (row.source === null ? 0 : Buffer.byteLength(row.source))
  );
}

/**
 * The segments of the historian in `uns_segments`: one a topic and UTC day. `compactDay` moves a day's
 * rows of `uns_values` into its segment in one transaction: the rows are deleted with RETURNING, so
 * exactly the rows read are the rows removed (a value committed meanwhile stays a row), merged with the
 * segment already there (a row replaces the segment's value at the same timestamp: it was published
 * later), encoded and written back. A crash before the commit leaves rows and segment as they were.
 */
export class SegmentStore {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly dialect: DialectName,
  ) {}

  /** The topics with rows declared before `beforeUs`, each with its oldest such row (series-before.ts). */
  seriesBefore(beforeUs: number): Promise<SeriesToCompact[]> {
    return seriesBefore(this.db, this.dialect, beforeUs);
  }

  /** Whether any row is declared before `beforeUs`: a cheap question (series-before.ts). */
  hasRowsBefore(beforeUs: number): Promise<boolean> {
    return hasRowsBefore(this.db, this.dialect, beforeUs);
  }

  /** The oldest row of a topic in [fromUs, beforeUs), or null. */
  async nextRowAt(topicId: number, fromUs: number, beforeUs: number): Promise<number | null> {
    const row = await this.db
      .selectFrom('uns_values')
      .select('ts_us')
      .where('topic_id', '=', topicId)
      .where('ts_us', '>=', fromUs)
      .where('ts_us', '<', beforeUs)
      .orderBy('ts_us')
      .limit(1)
      .executeTakeFirst();
    return row === undefined ? null : Number(row.ts_us);
  }

  /**
   * Moves the rows of one topic's UTC day into its segment. `dryRun`: reads and encodes, changes nothing.
   * Answers the figures of the rows moved (the segment's bytes are the whole segment's).
   *
   * SQLite: the decoding and encoding happen before the transaction, on what a read found, so that the
   * transaction holds the write lock only for its statements; should the rows deleted or the segment
   * differ from what was read (a value committed in between), the day is encoded again inside. (The
   * server moves the rows on the historian thread instead: compaction-thread.ts.) PostgreSQL: everything
   * happens in the transaction, under the topic's advisory lock, which publishes do not take; the rows
   * are read once, by the delete.
   */
  async compactDay(topicId: number, dayUs: number, dryRun = false): Promise<CompactionFigures> {
    let prepared: EncodedDay | undefined;
    let read: DayAsRead | undefined;
    if (dryRun || this.dialect === 'sqlite') {
      read = await this.dayAsRead(this.db, topicId, dayUs);
      if (read.rows.length === 0) return NO_FIGURES;
      prepared = encodeDay(read.segment, read.rows);
      if (dryRun) return figuresOf(prepared, read.rows.length);
    }
    return this.db.transaction().execute(async (trx) => {
      // Two compactions of one topic at once (a lease that ran out mid-run) take turns: PostgreSQL by
      // an advisory lock of the topic for the transaction; SQLite's writers are serial already.
      if (this.dialect === 'postgres')
        await sql`select pg_advisory_xact_lock(${SEGMENT_LOCK_CLASS}, ${topicId % 2 ** 31}::int)`.execute(
          trx,
        );
      const existing = await sql<StoredSegment>`
        select data, row_bytes from uns_segments where topic_id = ${topicId} and day_us = ${dayUs}`.execute(
        trx,
      );
      const { rows } = await sql<StoredRow>`
        delete from uns_values where topic_id = ${topicId} and ts_us >= ${dayUs} and ts_us < ${dayUs + DAY_US}
        returning ts_us, value_json, quality, source, received_us`.execute(trx);
      if (rows.length === 0) return NO_FIGURES;
      const moved = rows.map(toSegmentRow);
      const before = existing.rows[0];
      const day =
        prepared && read && sameSegment(before?.data, read.segment?.data) && sameRows(moved, read.rows)
          ? prepared
          : encodeDay(before, moved);
      await this.writeSegment(trx, topicId, dayUs, day.merged, day.data, day.rowBytes);
      return figuresOf(day, moved.length);
    });
  }

  /**
   * A topic-day's rows read and encoded with its segment, for a transaction on another connection to
   * move (SqliteHistorianThread.commitCompaction), or null when the day has no rows. Changes nothing.
   */
  async prepareDay(topicId: number, dayUs: number): Promise<PreparedDay | null> {
    const read = await this.dayAsRead(this.db, topicId, dayUs);
    if (read.rows.length === 0) return null;
    const day = encodeDay(read.segment, read.rows);
    const merged = day.merged;
    return {
      topicId,
      dayUs,
      rowsFingerprint: fingerprintOf(read.rows),
      segmentRead: read.segment?.data ?? null,
      data: day.data,
      firstUs: (merged[0] as SegmentRow).tsUs,
      lastUs: (merged[merged.length - 1] as SegmentRow).tsUs,
      valueCount: merged.length,
      rowBytes: day.rowBytes,
      figures: figuresOf(day, read.rows.length),
    };
  }

  /** A day's segment and rows as a read outside any transaction finds them (rows by time). */
  private async dayAsRead(db: Kysely<Database>, topicId: number, dayUs: number): Promise<DayAsRead> {
    const existing = await sql<StoredSegment>`
      select data, row_bytes from uns_segments where topic_id = ${topicId} and day_us = ${dayUs}`.execute(db);
    const rows = (await db
      .selectFrom('uns_values')
      .select(['ts_us', 'value_json', 'quality', 'source', 'received_us'])
      .where('topic_id', '=', topicId)
      .where('ts_us', '>=', dayUs)
      .where('ts_us', '<', dayUs + DAY_US)
      .orderBy('ts_us')
      .execute()) as StoredRow[];
    return { segment: existing.rows[0], rows: rows.map(toSegmentRow) };
  }

  /** Writes (or replaces) the segment of a topic's day; `rows` sorted by time, not empty. */
  async writeSegment(
    db: Kysely<Database>,
    topicId: number,
    dayUs: number,
    rows: SegmentRow[],
    data: Uint8Array,
    bytesOfRows: number,
  ): Promise<void> {
    const values = {
      topic_id: topicId,
      day_us: dayUs,
      first_us: (rows[0] as SegmentRow).tsUs,
      last_us: (rows[rows.length - 1] as SegmentRow).tsUs,
      value_count: rows.length,
      row_bytes: bytesOfRows,
      data: Buffer.from(data.buffer, data.byteOffset, data.byteLength),
    };
    await db
      .insertInto('uns_segments')
      .values(values)
      .onConflict((oc) =>
        oc.columns(['topic_id', 'day_us']).doUpdateSet({
          first_us: values.first_us,
          last_us: values.last_us,
          value_count: values.value_count,
          row_bytes: values.row_bytes,
          data: values.data,
        }),
      )
      .execute();
  }

  /** Figures of every segment stored: values, segments, bytes their rows took and bytes now. */
  async figures(): Promise<CompactionFigures> {
    const row = await sql<{
      values: number | string | null;
      segments: number | string;
      row_bytes: number | string | null;
      bytes: number | string | null;
    }>`
      select sum(value_count) as ${sql.ref('values')}, count(*) as segments, sum(row_bytes) as row_bytes,
        sum(length(data)) as bytes from uns_segments`.execute(this.db);
    const r = row.rows[0];
    return {
      values: Number(r?.values ?? 0),
      segments: Number(r?.segments ?? 0),
      rowBytes: Number(r?.row_bytes ?? 0),
      segmentBytes: Number(r?.bytes ?? 0),
    };
  }

  /**
   * Retention: drops every segment whose day ends at or before `cutoffUs` whole, and re-encodes the one
   * day that straddles it without its values declared before `cutoffUs`. Answers the values dropped.
   */
  async dropBefore(cutoffUs: number): Promise<number> {
    return this.db.transaction().execute(async (trx) => {
      const whole = await trx
        .deleteFrom('uns_segments')
        .where('day_us', '<=', cutoffUs - DAY_US)
        .returning('value_count')
        .execute();
      let dropped = whole.reduce((sum, r) => sum + Number(r.value_count), 0);
      const straddling = await trx
        .selectFrom('uns_segments')
        .select(['topic_id', 'day_us', 'data', 'row_bytes', 'value_count'])
        .where('day_us', '=', dayOf(cutoffUs))
        .where('first_us', '<', cutoffUs)
        .execute();
      for (const segment of straddling) {
        const kept = decodeSegment(segment.data).filter((row) => row.tsUs >= cutoffUs);
        dropped += Number(segment.value_count) - kept.length;
        if (kept.length === 0) {
          await trx
            .deleteFrom('uns_segments')
            .where('topic_id', '=', segment.topic_id)
            .where('day_us', '=', segment.day_us)
            .execute();
          continue;
        }
        const share = Math.round((Number(segment.row_bytes) * kept.length) / Number(segment.value_count));
        const day = Number(segment.day_us);
        await this.writeSegment(trx, Number(segment.topic_id), day, kept, encodeSegment(kept), share);
      }
      return dropped;
    });
  }
}

type StoredSegment = { data: Uint8Array; row_bytes: number | string };
type DayAsRead = { segment: StoredSegment | undefined; rows: SegmentRow[] };

/**
 * A day's segment merged with its rows (by time) and encoded, with the bytes the rows took (`movedBytes`)
 * and those of every row the segment holds now (`rowBytes`).
 */
type EncodedDay = { merged: SegmentRow[]; data: Uint8Array; movedBytes: number; rowBytes: number };

function encodeDay(segment: StoredSegment | undefined, rows: SegmentRow[]): EncodedDay {
  const merged = mergeRows(segment === undefined ? [] : decodeSegment(segment.data), rows);
  const movedBytes = rows.reduce((sum, row) => sum + rowBytes(row), 0);
  const rowBytesBefore = Number(segment?.row_bytes ?? 0);
  return { merged, data: encodeSegment(merged), movedBytes, rowBytes: rowBytesBefore + movedBytes };
}

function figuresOf(day: EncodedDay, values: number): CompactionFigures {
  return { values, segments: 1, rowBytes: day.movedBytes, segmentBytes: day.data.length };
}

function sameSegment(a: Uint8Array | undefined, b: Uint8Array | undefined): boolean {
  if (a === undefined || b === undefined) return a === b;
  return Buffer.from(a.buffer, a.byteOffset, a.byteLength).equals(b);
}

/** Whether the rows deleted are those read (both by time: the delete's RETURNING order is not). */
function sameRows(deleted: SegmentRow[], read: SegmentRow[]): boolean {
  if (deleted.length !== read.length) return false;
  const sorted = [...deleted].sort((a, b) => a.tsUs - b.tsUs);
  return sorted.every((row, i) => {
    const other = read[i] as SegmentRow;
    return (
      row.tsUs === other.tsUs &&
      row.valueJson === other.valueJson &&
      row.quality === other.quality &&
      row.source === other.source &&
      row.receivedUs === other.receivedUs
    );
  });
}

function toSegmentRow(row: StoredRow): SegmentRow {
  return {
    tsUs: Number(row.ts_us),
    valueJson: row.value_json,
    quality: Number(row.quality),
    source: row.source,
    receivedUs: Number(row.received_us),
  };
}

/** The segment's values and the rows, by time; a row replaces the segment's value at its timestamp. */
export function mergeRows(segment: SegmentRow[], rows: SegmentRow[]): SegmentRow[] {
  const byTime = new Map<number, SegmentRow>();
  for (const row of segment) byTime.set(row.tsUs, row);
  for (const row of rows) byTime.set(row.tsUs, row);
  return [...byTime.values()].sort((a, b) => a.tsUs - b.tsUs);
}
