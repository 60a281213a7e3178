import type { Kysely } from 'kysely';
import type { Database } from '../../../../storage/tables.js';
import type { NumberSlice } from './decoded/number-buckets.js';
import { segmentCache } from './decoded/segment-cache.js';
import type { SegmentColumns } from './decoded/segment-columns.js';
import type { SegmentRow } from './segment-codec.js';

/** A value as the history reads it (the columns of `uns_values` a page answers with). */
export interface HistoryRow {
  ts_us: number;
  value_json: string;
  quality: number;
  source: string | null;
  received_us: number;
}

export interface SegmentRange {
  topicId: number;
  /** [fromUs, toUs) by declared time. */
  fromUs: number;
  toUs: number;
  order: 'asc' | 'desc';
  /** Exclusive keyset bound (the last timestamp of the previous page), or null. */
  afterUs: number | null;
  /** At most this many values; null: all of them. */
  limit: number | null;
}

/**
 * The values of a topic's segments in a range, in `order`: only the segments whose days overlap the
 * range (and lie past the cursor) are read, nearest first (newest first for `desc`), and reading stops
 * once `limit` values are found; a segment's columns come from the decode cache (segment-cache.ts) and
 * value objects are built for the values answered only.
 */
export async function segmentValues(db: Kysely<Database>, range: SegmentRange): Promise<SegmentRow[]> {
  const { topicId, order, afterUs, limit } = range;
  let fromUs = range.fromUs;
  let toUs = range.toUs;
  if (afterUs !== null) {
    if (order === 'asc') fromUs = Math.max(fromUs, afterUs + 1);
    else toUs = Math.min(toUs, afterUs);
  }
  const out: SegmentRow[] = [];
  const wanted = limit ?? Number.POSITIVE_INFINITY;
  for await (const columns of overlappingSegments(db, { topicId, fromUs, toUs, order, limit })) {
    const { lo, hi } = indexRange(columns, fromUs, toUs);
    if (columns.sorted) {
      if (order === 'asc') for (let i = lo; i < hi && out.length < wanted; i++) out.push(columns.row(i));
      else for (let i = hi - 1; i >= lo && out.length < wanted; i--) out.push(columns.row(i));
    } else {
      // Not by time (a segment not written by the store): every value, in its order, filtered.
      const inRange = (i: number) =>
        (columns.times[i] as number) >= fromUs && (columns.times[i] as number) < toUs;
      if (order === 'asc') {
        for (let i = 0; i < columns.count && out.length < wanted; i++)
          if (inRange(i)) out.push(columns.row(i));
      } else {
        for (let i = columns.count - 1; i >= 0 && out.length < wanted; i--)
          if (inRange(i)) out.push(columns.row(i));
      }
    }
    if (out.length >= wanted) break;
  }
  return out;
}

/**
 * The numbers (NaN: not a number) of a topic's segments in [fromUs, toUs), by time, as slices of the
 * decoded columns: what aggregates read, without value objects.
 */
export async function segmentNumbers(
  db: Kysely<Database>,
  topicId: number,
  fromUs: number,
  toUs: number,
): Promise<NumberSlice[]> {
  const out: NumberSlice[] = [];
  const range = { topicId, fromUs, toUs, order: 'asc' as const, limit: null };
  for await (const columns of overlappingSegments(db, range)) {
    const { times } = columns;
    const numbers = columns.numbers();
    if (columns.sorted) {
      const { lo, hi } = indexRange(columns, fromUs, toUs);
      if (hi > lo)
        out.push({ times, numbers, lo, hi, firstUs: times[lo] as number, lastUs: times[hi - 1] as number });
      continue;
    }
    const inRange = numbers.slice();
    let firstUs = Number.POSITIVE_INFINITY;
    let lastUs = Number.NEGATIVE_INFINITY;
    for (let i = 0; i < columns.count; i++) {
      const t = times[i] as number;
      if (t < fromUs || t >= toUs) inRange[i] = Number.NaN;
      else {
        firstUs = Math.min(firstUs, t);
        lastUs = Math.max(lastUs, t);
      }
    }
    if (firstUs <= lastUs) out.push({ times, numbers: inRange, lo: 0, hi: columns.count, firstUs, lastUs });
  }
  return out;
}

/** The values of sorted columns in [fromUs, toUs), as an index range. */
function indexRange(columns: SegmentColumns, fromUs: number, toUs: number): { lo: number; hi: number } {
  return { lo: columns.lowerBound(fromUs), hi: columns.sorted ? columns.lowerBound(toUs) : columns.count };
}

/**
 * The decoded segments of a topic overlapping [fromUs, toUs), in `order` of days. Their days are looked
 * up first; their bytes are read a few at a time, as many as `limit` values can need (a segment holds at
 * most its `value_count` in the range), so that a page reads the segments it answers from only.
 */
async function* overlappingSegments(
  db: Kysely<Database>,
  range: { topicId: number; fromUs: number; toUs: number; order: 'asc' | 'desc'; limit: number | null },
): AsyncGenerator<SegmentColumns> {
  const { topicId, fromUs, toUs, order } = range;
  if (fromUs >= toUs) return;
  const days = await db
    .selectFrom('uns_segments')
    .select(['day_us', 'value_count'])
    .where('topic_id', '=', topicId)
    .where('last_us', '>=', fromUs)
    .where('first_us', '<', toUs)
    .orderBy('day_us', order)
    .execute();
  let left = range.limit ?? Number.POSITIVE_INFINITY;
  for (let at = 0; at < days.length; ) {
    const batch: number[] = [];
    while (at < days.length && batch.length < SEGMENTS_A_READ && (batch.length === 0 || left > 0)) {
      const day = days[at++] as (typeof days)[number];
      batch.push(Number(day.day_us));
      left -= Number(day.value_count);
    }
    const read = await db
      .selectFrom('uns_segments')
      .select(['day_us', 'data'])
      .where('topic_id', '=', topicId)
      .where('day_us', 'in', batch)
      .orderBy('day_us', order)
      .execute();
    for (const segment of read) yield segmentCache.columns(topicId, Number(segment.day_us), segment.data);
  }
}

/** The most segments whose bytes one query reads (a month of days). */
const SEGMENTS_A_READ = 32;

/**
 * Rows and segment values of one range merged in `order`, at most `limit`: where both hold a
 * timestamp, the row wins (it was written after the segment: a late value replacing one).
 */
export function mergeHistory(
  rows: HistoryRow[],
  segments: SegmentRow[],
  order: 'asc' | 'desc',
  limit: number,
): HistoryRow[] {
  if (segments.length === 0) return rows.slice(0, limit);
  const before = order === 'asc' ? (a: number, b: number) => a < b : (a: number, b: number) => a > b;
  const out: HistoryRow[] = [];
  let r = 0;
  let s = 0;
  while (out.length < limit && (r < rows.length || s < segments.length)) {
    const row = rows[r];
    const segment = segments[s];
    if (segment === undefined || (row !== undefined && !before(segment.tsUs, Number(row.ts_us)))) {
      if (row !== undefined && segment !== undefined && Number(row.ts_us) === segment.tsUs) s++;
      out.push(row as HistoryRow);
      r++;
    } else {
      out.push({
        ts_us: segment.tsUs,
        value_json: segment.valueJson,
        quality: segment.quality,
        source: segment.source,
        received_us: segment.receivedUs,
      });
      s++;
    }
  }
  return out;
}

export { numberOf } from './decoded/segment-columns.js';
