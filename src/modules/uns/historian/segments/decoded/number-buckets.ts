import type { PartialBucket } from '../../../rollups/rollup-store.js';

/** One bucket's aggregate computed in memory, as the SQL over rows answers it. */
export interface NumberBucket extends PartialBucket {
  /** SQLite's `sum` compensates (Kahan-Babuska-Neumaier since 3.43): its error term. */
  error: number;
  /** The database's average of the bucket's rows, while no value was added here (then it is dropped). */
  rowsAvg?: number;
}

/** Values of one column of declared times and one of numbers (NaN: not a number), [lo, hi) of them. */
export interface NumberSlice {
  times: Float64Array;
  numbers: Float64Array;
  lo: number;
  hi: number;
  /** The earliest and latest declared time of the slice's values (Infinity and -Infinity: none). */
  firstUs: number;
  lastUs: number;
}

export interface BucketGrid {
  originUs: number;
  widthUs: number;
  /** Sum as SQLite does (compensated), else as PostgreSQL's float8 does (plainly). */
  compensated: boolean;
}

/**
 * Adds one number declared at `tsUs` to the bucket `index` of `buckets`. The first value is the one at
 * the earliest timestamp (the first added of equal ones), the last the one at the latest (the last added
 * of equal ones: values are added in time order, a later row after the segment value it replaces).
 */
export function addNumber(
  buckets: Map<number, NumberBucket>,
  index: number,
  tsUs: number,
  number: number,
  compensated: boolean,
): NumberBucket {
  const b = buckets.get(index);
  if (b === undefined) {
    const created = {
      cnt: 1,
      sum: number,
      error: 0,
      min: number,
      max: number,
      firstTs: tsUs,
      first: number,
      lastTs: tsUs,
      last: number,
    };
    buckets.set(index, created);
    return created;
  }
  accumulate(b, tsUs, number, compensated);
  return b;
}

function accumulate(b: NumberBucket, tsUs: number, number: number, compensated: boolean): void {
  b.rowsAvg = undefined;
  b.cnt++;
  if (compensated) {
    // SQLite's kahanBabuskaNeumaierStep, so that a compressed bucket averages to the same double.
    const t = b.sum + number;
    b.error += Math.abs(b.sum) > Math.abs(number) ? b.sum - t + number : number - t + b.sum;
    b.sum = t;
  } else {
    b.sum += number; // PostgreSQL's float8 accumulation is a plain sum
  }
  if (number < b.min) b.min = number;
  if (number > b.max) b.max = number;
  if (tsUs < b.firstTs) {
    b.firstTs = tsUs;
    b.first = number;
  }
  if (tsUs >= b.lastTs) {
    b.lastTs = tsUs;
    b.last = number;
  }
}

/**
 * Adds the numbers of `slice` (in its order; NaN and the timestamps in `skip` left out) to their
 * buckets, straight from the typed columns: no value objects, one map lookup a bucket, not a value.
 */
export function addSlice(
  buckets: Map<number, NumberBucket>,
  slice: NumberSlice,
  grid: BucketGrid,
  skip?: ReadonlySet<number>,
): void {
  const { times, numbers, lo, hi } = slice;
  const { originUs, widthUs, compensated } = grid;
  let index = Number.NaN;
  let bucket: NumberBucket | undefined;
  for (let i = lo; i < hi; i++) {
    const number = numbers[i] as number;
    if (Number.isNaN(number)) continue; // no number
    const tsUs = times[i] as number;
    if (skip !== undefined && skip.size > 0 && skip.has(tsUs)) continue;
    const at = Math.floor((tsUs - originUs) / widthUs);
    if (at === index && bucket !== undefined) accumulate(bucket, tsUs, number, compensated);
    else {
      bucket = addNumber(buckets, at, tsUs, number, compensated);
      index = at;
    }
  }
}

/** The average a bucket answers: the database's while only rows are in it, else its compensated sum's. */
export function bucketAverage(b: NumberBucket): number {
  return b.rowsAvg ?? (b.sum + b.error) / b.cnt;
}
