import type { Kysely } from 'kysely';
import type { Database } from '../../../storage/tables.js';
import { DAY_US } from '../historian/historian-layout.js';
import { addNumber, addSlice, type NumberBucket } from '../historian/segments/decoded/number-buckets.js';
import type { SegmentRow } from '../historian/segments/segment-codec.js';
import { numberOf, segmentNumbers, segmentValues } from '../historian/segments/segment-reads.js';
import { mergeRows } from '../historian/segments/segment-store.js';
import { type FieldParts, fieldPathParts } from './value-member.js';

/** A part of a range: inside days a compressed segment of the topic holds (`segments`), or only rows. */
export interface RangePiece {
  fromUs: number;
  toUs: number;
  segments: boolean;
}

export type { NumberBucket } from '../historian/segments/decoded/number-buckets.js';

/**
 * Splits [fromUs, toUs) into the pieces that lie in days with a segment of the topic and the pieces
 * that do not (in order; empty when the range is). Pieces of the first kind are read here (segments
 * merged with their rows); the others stay with the SQL over rows.
 */
export async function rangePieces(
  db: Kysely<Database>,
  topicId: number,
  fromUs: number,
  toUs: number,
): Promise<RangePiece[]> {
  if (toUs <= fromUs) return [];
  const days = await db
    .selectFrom('uns_segments')
    .select('day_us')
    .where('topic_id', '=', topicId)
    .where('day_us', '<', toUs)
    .where('day_us', '>', fromUs - DAY_US)
    .orderBy('day_us')
    .execute();
  const out: RangePiece[] = [];
  let at = fromUs;
  for (const { day_us } of days) {
    const start = Math.max(Number(day_us), fromUs);
    const end = Math.min(Number(day_us) + DAY_US, toUs);
    if (start > at) out.push({ fromUs: at, toUs: start, segments: false });
    const last = out[out.length - 1];
    if (last?.segments && last.toUs === start) last.toUs = end;
    else out.push({ fromUs: start, toUs: end, segments: true });
    at = end;
  }
  if (at < toUs) out.push({ fromUs: at, toUs, segments: false });
  return out;
}

/** The number at `parts` inside a stored value's JSON (a JSON number), else null; no parts: the value. */
export function numberAt(valueJson: string, parts: FieldParts): number | null {
  if (parts.length === 0) return numberOf(valueJson);
  let value: unknown;
  try {
    value = JSON.parse(valueJson);
  } catch {
    return null;
  }
  for (const part of parts) {
    if (value === null || typeof value !== 'object') return null;
    if (typeof part === 'number' ? !Array.isArray(value) : Array.isArray(value)) return null;
    value = (value as Record<string | number, unknown>)[part];
  }
  return typeof value === 'number' ? value : null;
}

/** A topic's rows of `uns_values` in [fromUs, toUs), by time, as segment values. */
async function rowsIn(
  db: Kysely<Database>,
  topicId: number,
  fromUs: number,
  toUs: number,
): Promise<SegmentRow[]> {
  const rows = await db
    .selectFrom('uns_values')
    .select(['ts_us', 'value_json', 'quality', 'source', 'received_us'])
    .where('topic_id', '=', topicId)
    .where('ts_us', '>=', fromUs)
    .where('ts_us', '<', toUs)
    .orderBy('ts_us')
    .execute();
  return rows.map((r) => ({
    tsUs: Number(r.ts_us),
    valueJson: r.value_json,
    quality: Number(r.quality),
    source: r.source,
    receivedUs: Number(r.received_us),
  }));
}

/**
 * The numbers of a series in [fromUs, toUs) (segments and rows) aggregated into buckets of `widthUs`
 * counted from `originUs` (bucket index -> aggregate). `compensated`: sums as SQLite does. The value
 * itself (field ''), with no row in the range: straight from the segments' decoded columns. Else the
 * segments' values merged with the rows (a row replaces the segment's value at its timestamp: a late
 * value not yet merged), in time order, each value's member at the field path.
 */
export async function heldBuckets(
  db: Kysely<Database>,
  series: { topicId: number; field: string },
  range: { fromUs: number; toUs: number },
  originUs: number,
  widthUs: number,
  compensated: boolean,
): Promise<Map<number, NumberBucket>> {
  const { topicId } = series;
  const parts = fieldPathParts(series.field);
  const out = new Map<number, NumberBucket>();
  const rows = await rowsIn(db, topicId, range.fromUs, range.toUs);
  if (parts.length === 0 && rows.length === 0) {
    const grid = { originUs, widthUs, compensated };
    for (const slice of await segmentNumbers(db, topicId, range.fromUs, range.toUs))
      addSlice(out, slice, grid);
    return out;
  }
  const segments = await segmentValues(db, { topicId, ...range, order: 'asc', afterUs: null, limit: null });
  for (const value of rows.length === 0 ? segments : mergeRows(segments, rows)) {
    const number = numberAt(value.valueJson, parts);
    if (number !== null)
      addNumber(out, Math.floor((value.tsUs - originUs) / widthUs), value.tsUs, number, compensated);
  }
  return out;
}
