import type { Kysely } from 'kysely';
import type { Database } from '../../../storage/tables.js';
import { DAY_US } from '../historian/historian-layout.js';
import type { SegmentRow } from '../historian/segments/segment-codec.js';
import { numberOf, segmentValues } from '../historian/segments/segment-reads.js';
import { mergeRows } from '../historian/segments/segment-store.js';
import { type FieldParts, fieldPathParts } from './value-member.js';

/** A part of a range: inside days a compressed segment of the topic holds (`segments`), or only rows. */
export interface RangePiece {
  fromUs: number;
  toUs: number;
  segments: boolean;
}

/** One bucket's aggregate computed here, as the SQL over rows answers it. */
export interface NumberBucket {
  cnt: number;
  sum: number;
  /** SQLite's `sum` compensates (Kahan-Babuska-Neumaier since 3.43): its error term. */
  error: number;
  min: number;
  max: number;
  firstTs: number;
  first: number;
  lastTs: number;
  last: number;
}

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

/**
 * The values of a topic in [fromUs, toUs) as the historian holds them: its segments' values merged with
 * its rows there (a row replaces the segment's value at its timestamp: a late value not yet merged).
 */
export async function heldValues(
  db: Kysely<Database>,
  topicId: number,
  fromUs: number,
  toUs: number,
): Promise<SegmentRow[]> {
  const segments = await segmentValues(db, {
    topicId,
    fromUs,
    toUs,
    order: 'asc',
    afterUs: null,
    limit: null,
  });
  const rows = await db
    .selectFrom('uns_values')
    .select(['ts_us', 'value_json', 'quality', 'source', 'received_us'])
    .where('topic_id', '=', topicId)
    .where('ts_us', '>=', fromUs)
    .where('ts_us', '<', toUs)
    .orderBy('ts_us')
    .execute();
  if (rows.length === 0) return segments;
  return mergeRows(
    segments,
    rows.map((r) => ({
      tsUs: Number(r.ts_us),
      valueJson: r.value_json,
      quality: Number(r.quality),
      source: r.source,
      receivedUs: Number(r.received_us),
    })),
  );
}

/**
 * The numbers of a series in [fromUs, toUs) (segments and rows) aggregated into buckets of `widthUs`
 * counted from `originUs` (bucket index -> aggregate). `compensated`: sums as SQLite does.
 */
export async function heldBuckets(
  db: Kysely<Database>,
  series: { topicId: number; field: string },
  range: { fromUs: number; toUs: number },
  originUs: number,
  widthUs: number,
  compensated: boolean,
): Promise<Map<number, NumberBucket>> {
  const parts = fieldPathParts(series.field);
  const out = new Map<number, NumberBucket>();
  for (const value of await heldValues(db, series.topicId, range.fromUs, range.toUs)) {
    const number = numberAt(value.valueJson, parts);
    if (number === null) continue;
    const index = Math.floor((value.tsUs - originUs) / widthUs);
    const b = out.get(index);
    if (b === undefined) {
      out.set(index, {
        cnt: 1,
        sum: number,
        error: 0,
        min: number,
        max: number,
        firstTs: value.tsUs,
        first: number,
        lastTs: value.tsUs,
        last: number,
      });
      continue;
    }
    b.cnt++;
    if (compensated) {
      const t = b.sum + number;
      b.error += Math.abs(b.sum) > Math.abs(number) ? b.sum - t + number : number - t + b.sum;
      b.sum = t;
    } else b.sum += number;
    if (number < b.min) b.min = number;
    if (number > b.max) b.max = number;
    // Values come in time order: the last seen is the latest.
    b.lastTs = value.tsUs;
    b.last = number;
  }
  return out;
}
