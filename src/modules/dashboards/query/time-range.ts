import { badRequest } from '../../../platform/errors.js';
import { parseRfc3339Micros } from '../../uns/rfc3339.js';

const RELATIVE = /^now(?:-(\d{1,6})(s|m|h|d|w))?$/;
const UNIT_MS: Record<string, number> = { s: 1e3, m: 6e4, h: 3.6e6, d: 8.64e7, w: 6.048e8 };
/** The longest range a dashboard may ask for: ten years. */
export const MAX_RANGE_MS = 10 * 365 * 86_400_000;

/**
 * A time as a dashboard writes it, in epoch milliseconds: `now`, `now-<n><s|m|h|d|w>` relative to
 * `nowMs`, or an RFC 3339 timestamp. Throws 400 naming `field`.
 */
export function resolveTime(text: string, nowMs: number, field: string): number {
  const relative = RELATIVE.exec(text);
  if (relative) {
    if (relative[1] === undefined) return nowMs;
    return nowMs - Number(relative[1]) * UNIT_MS[relative[2]!]!;
  }
  try {
    return Math.floor(parseRfc3339Micros(text, field) / 1000);
  } catch {
    throw badRequest(
      `${field} must be now, now-<n><s|m|h|d|w> (e.g. now-6h) or an RFC 3339 timestamp, not ${JSON.stringify(text.slice(0, 40))}`,
    );
  }
}

/** Resolves a range; 400 naming `field` when either end is malformed, from is not before to, or it is too long. */
export function resolveRange(
  range: { from: string; to: string },
  nowMs: number,
  field: string,
): { fromMs: number; toMs: number } {
  const prefix = field ? `${field}.` : '';
  const fromMs = resolveTime(range.from, nowMs, `${prefix}from`);
  const toMs = resolveTime(range.to, nowMs, `${prefix}to`);
  if (toMs <= fromMs) throw badRequest(`${field || 'time range'}: from must be earlier than to`);
  if (toMs - fromMs > MAX_RANGE_MS) throw badRequest(`${field || 'time range'}: at most ten years`);
  return { fromMs, toMs };
}

/** Bucket widths the query picks from, smallest first (what a chart's axis reads well). */
const NICE_MS = [
  1, 2, 5, 10, 20, 50, 100, 200, 500, 1_000, 2_000, 5_000, 10_000, 15_000, 30_000, 60_000, 120_000, 300_000,
  600_000, 900_000, 1_800_000, 3_600_000, 7_200_000, 10_800_000, 21_600_000, 43_200_000, 86_400_000,
  172_800_000, 604_800_000, 2_592_000_000,
];

/**
 * The bucket width for `maxPoints` points over a range: the smallest nice width at or above
 * range / maxPoints, so the buckets number at most `maxPoints` (one a pixel column).
 */
export function bucketWidthMs(rangeMs: number, maxPoints: number): number {
  const least = rangeMs / Math.max(1, maxPoints);
  for (const width of NICE_MS) if (width >= least) return width;
  return Math.ceil(least / 86_400_000) * 86_400_000;
}

/**
 * The bucket width for at most `maxPoints` buckets aligned to multiples of the width from the epoch
 * (what rollups of whole minutes and hours answer) over [fromMs, toMs): the smallest nice width whose
 * aligned buckets touching the range number at most `maxPoints`.
 */
export function alignedBucketWidthMs(fromMs: number, toMs: number, maxPoints: number): number {
  const fits = (width: number) =>
    Math.floor((toMs - 1) / width) - Math.floor(fromMs / width) + 1 <= Math.max(1, maxPoints);
  for (let width = bucketWidthMs(toMs - fromMs, maxPoints); ; ) {
    if (fits(width)) return width;
    const next = NICE_MS.find((w) => w > width);
    width = next ?? width + 86_400_000;
  }
}
