import type { Kysely } from 'kysely';
import type { Database } from '../../../../storage/tables.js';
import { decodeSegment, type SegmentRow } from './segment-codec.js';

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
 * range (and lie past the cursor) are read, nearest first (newest first for `desc`), and decoding stops
 * once `limit` values are found.
 */
export async function segmentValues(db: Kysely<Database>, range: SegmentRange): Promise<SegmentRow[]> {
  const { topicId, order, afterUs, limit } = range;
  let fromUs = range.fromUs;
  let toUs = range.toUs;
  if (afterUs !== null) {
    if (order === 'asc') fromUs = Math.max(fromUs, afterUs + 1);
    else toUs = Math.min(toUs, afterUs);
  }
  if (fromUs >= toUs) return [];
  const segments = await db
    .selectFrom('uns_segments')
    .select(['data'])
    .where('topic_id', '=', topicId)
    .where('last_us', '>=', fromUs)
    .where('first_us', '<', toUs)
    .orderBy('day_us', order)
    .execute();
  const out: SegmentRow[] = [];
  for (const segment of segments) {
    const rows = decodeSegment(segment.data);
    if (order === 'desc') rows.reverse();
    for (const row of rows) if (row.tsUs >= fromUs && row.tsUs < toUs) out.push(row);
    if (limit !== null && out.length >= limit) return out.slice(0, limit);
  }
  return out;
}

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

/** The number a stored value is (what `value_num` holds for a row), else null. */
export function numberOf(valueJson: string): number | null {
  const first = valueJson.charCodeAt(0);
  return first === 45 || (first >= 48 && first <= 57) ? Number(valueJson) : null;
}
