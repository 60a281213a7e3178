import type { SegmentRow } from './segment-codec.js';

/**
 * A fingerprint of one topic-day's rows: what a compaction prepared on one connection checks, in the
 * transaction that moves the rows on another, to know that the rows it encoded are still exactly those
 * stored (SqliteHistorianThread.commitCompaction). Computed by SQL on the rows stored and by
 * `fingerprintOf` on the rows read, with the same integer arithmetic: the count, then the sums of the
 * declared and receipt times split at 2^20 (each sum stays exact: a million rows of times below 2^53),
 * of the values' UTF-8 bytes, of the qualities, and of the sources' bytes (a row without one counts 0,
 * one with an empty one 1).
 *
 * A value committed after the read adds a row or replaces one. A replacement is a later publish, so its
 * receipt time differs from the row it replaces, and the sums of receipt times differ with it.
 */
export type DayFingerprint = number[];

const SPLIT = 1_048_576;

/** The fingerprint's SQL over `uns_values` (parameters: topic id, day start, day end), one row of numbers. */
export function dayFingerprintSql(table: string): string {
  const sum = (expression: string) => `coalesce(sum(${expression}), 0)`;
  return `select count(*), ${[
    `ts_us % ${SPLIT}`,
    `ts_us / ${SPLIT}`,
    `received_us % ${SPLIT}`,
    `received_us / ${SPLIT}`,
    'length(cast(value_json as blob))',
    'quality',
    'coalesce(length(cast(source as blob)) + 1, 0)',
  ]
    .map(sum)
    .join(', ')} from ${table} where topic_id = ? and ts_us >= ? and ts_us < ?`;
}

/** The fingerprint of rows as read (SQL's integer `%` and `/` truncate toward zero, as here). */
export function fingerprintOf(rows: readonly SegmentRow[]): DayFingerprint {
  const sums = [rows.length, 0, 0, 0, 0, 0, 0, 0];
  for (const row of rows) {
    sums[1]! += row.tsUs % SPLIT;
    sums[2]! += Math.trunc(row.tsUs / SPLIT);
    sums[3]! += row.receivedUs % SPLIT;
    sums[4]! += Math.trunc(row.receivedUs / SPLIT);
    sums[5]! += Buffer.byteLength(row.valueJson);
    sums[6]! += row.quality;
    sums[7]! += row.source === null ? 0 : Buffer.byteLength(row.source) + 1;
  }
  return sums;
}
