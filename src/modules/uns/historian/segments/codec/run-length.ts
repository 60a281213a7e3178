import { ByteReader, ByteWriter, SegmentFormatError } from './byte-stream.js';

/** Unsigned integers as (value, run length) varint pairs: qualities, value kinds, dictionary indexes. */
export function encodeRuns(values: ArrayLike<number>): Uint8Array {
  const out = new ByteWriter();
  let i = 0;
  while (i < values.length) {
    const value = values[i] as number;
    let run = 1;
    while (i + run < values.length && values[i + run] === value) run++;
    out.varint(value);
    out.varint(run);
    i += run;
  }
  return out.finish();
}

export function decodeRuns(encoded: Uint8Array, count: number): Float64Array {
  const input = new ByteReader(encoded);
  const out = new Float64Array(count);
  let i = 0;
  while (i < count) {
    const value = input.varint();
    const run = input.varint();
    if (run === 0 || i + run > count) throw new SegmentFormatError('holds a run past its values');
    out.fill(value, i, i + run);
    i += run;
  }
  return out;
}

/** Texts as a dictionary in order of first use and a run-length column of indexes into it. */
export function encodeDictionary(values: ArrayLike<string | null>): Uint8Array {
  const out = new ByteWriter();
  const index = new Map<string, number>();
  const entries: string[] = [];
  const indexes = new Array<number>(values.length);
  for (let i = 0; i < values.length; i++) {
    const value = values[i] as string | null;
    if (value === null) {
      indexes[i] = 0; // 0 is null, entries start at 1
      continue;
    }
    let at = index.get(value);
    if (at === undefined) {
      entries.push(value);
      at = entries.length;
      index.set(value, at);
    }
    indexes[i] = at;
  }
  out.varint(entries.length);
  for (const entry of entries) out.text(entry);
  out.block(encodeRuns(indexes));
  return out.finish();
}

export function decodeDictionary(encoded: Uint8Array, count: number): (string | null)[] {
  const { entries, indexes } = decodeDictionaryParts(encoded, count);
  const out = new Array<string | null>(count);
  for (let i = 0; i < count; i++) {
    const entry = entries[indexes[i] as number];
    if (entry === undefined) throw new SegmentFormatError('names a dictionary entry it does not hold');
    out[i] = entry;
  }
  return out;
}

/** A dictionary column as its entries (index 0 is null) and the index of each value, not yet looked up. */
export function decodeDictionaryParts(
  encoded: Uint8Array,
  count: number,
): { entries: (string | null)[]; indexes: Float64Array } {
  const input = new ByteReader(encoded);
  const entries: (string | null)[] = [null];
  const size = input.varint();
  for (let i = 0; i < size; i++) entries.push(input.text());
  return { entries, indexes: decodeRuns(input.block(), count) };
}
