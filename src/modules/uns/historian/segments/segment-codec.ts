import {
  brotliCompressSync,
  brotliDecompressSync,
  constants,
  deflateRawSync,
  inflateRawSync,
} from 'node:zlib';
import { ByteReader, ByteWriter, SegmentFormatError, ZIGZAG_LIMIT } from './codec/byte-stream.js';
import { decodeNumbers, encodeNumbers } from './codec/number-column.js';
import { decodeDictionary, decodeRuns, encodeDictionary, encodeRuns } from './codec/run-length.js';

/** One historized value as the historian stores it (`uns_values` without the topic). */
export interface SegmentRow {
  /** Declared timestamp, epoch microseconds. */
  tsUs: number;
  /** The value's JSON text exactly as stored. */
  valueJson: string;
  quality: number;
  source: string | null;
  /** Receipt time, epoch microseconds. */
  receivedUs: number;
}

export type SegmentCompression = 'none' | 'deflate' | 'brotli';

const FORMAT_VERSION = 1;
/**
 * Brotli's quality for segments. On the columns of a day of 8,640 values (floats, counters, text states,
 * booleans), quality 9 took 11-13 ms a segment and 5 and 6 took 0.1-0.6 ms, for the same size within
 * 0.5% (quality 9 was larger as often as smaller); 9 was most of what compacting a day cost.
 */
const BROTLI_QUALITY = 6;
const COMPRESSIONS: SegmentCompression[] = ['none', 'deflate', 'brotli'];
const KIND_NUMBER = 0;
const KIND_TEXT = 1;
const SEQUENCE_DELTAS = 0;
const SEQUENCE_RAW = 1;

/**
 * Encodes values of one series into one segment, column by column: declared times as zigzag varints
 * of delta-of-delta (regular sampling is a zero byte a value), receipt times as deltas, the kind of
 * each value (number or text) run-length, numbers by `number-column.ts` (decimal scale or Gorilla XOR),
 * every other JSON text (strings, booleans, objects) through a dictionary with run-length indexes,
 * qualities run-length, sources through a dictionary. Then the whole is compressed with what makes it
 * smallest (`compression: 'auto'`, the default), deflate or brotli from node:zlib, or left as is.
 * Rows keep their order; equal and decreasing timestamps are kept as given.
 */
export function encodeSegment(
  rows: readonly SegmentRow[],
  compression: SegmentCompression | 'auto' = 'auto',
): Uint8Array {
  const payload = encodePayload(rows);
  const candidates: [SegmentCompression, Uint8Array][] = [];
  if (compression === 'auto' || compression === 'none') candidates.push(['none', payload]);
  if (compression === 'auto' || compression === 'deflate')
    candidates.push(['deflate', deflateRawSync(payload, { level: 9 })]);
  if (compression === 'auto' || compression === 'brotli')
    candidates.push([
      'brotli',
      brotliCompressSync(payload, {
        params: {
          [constants.BROTLI_PARAM_QUALITY]: BROTLI_QUALITY,
          [constants.BROTLI_PARAM_SIZE_HINT]: payload.length,
        },
      }),
    ]);
  let best = candidates[0] as [SegmentCompression, Uint8Array];
  for (const candidate of candidates) if (candidate[1].length < best[1].length) best = candidate;
  const out = new Uint8Array(2 + best[1].length);
  out[0] = FORMAT_VERSION;
  out[1] = COMPRESSIONS.indexOf(best[0]);
  out.set(best[1], 2);
  return out;
}

/** The rows of a segment, exactly and in the order they were encoded. */
export function decodeSegment(segment: Uint8Array): SegmentRow[] {
  return decodePayload(segmentPayload(segment));
}

/** A segment's columns before decoding: its header read and its compression undone. */
export function segmentPayload(segment: Uint8Array): Uint8Array {
  if (segment.length < 2) throw new SegmentFormatError('is shorter than its header');
  if (segment[0] !== FORMAT_VERSION) throw new SegmentFormatError(`has unknown format ${segment[0]}`);
  const body = segment.subarray(2);
  let payload: Uint8Array;
  switch (COMPRESSIONS[segment[1] as number]) {
    case 'none':
      payload = body;
      break;
    case 'deflate':
      payload = inflateRawSync(body);
      break;
    case 'brotli':
      payload = brotliDecompressSync(body);
      break;
    default:
      throw new SegmentFormatError(`has unknown compression ${segment[1]}`);
  }
  return payload;
}

/** The compression a segment was written with (for figures). */
export function segmentCompression(segment: Uint8Array): SegmentCompression | undefined {
  return COMPRESSIONS[segment[1] as number];
}

function encodePayload(rows: readonly SegmentRow[]): Uint8Array {
  const out = new ByteWriter();
  const count = rows.length;
  out.varint(count);
  const kinds = new Array<number>(count);
  const numbers: number[] = [];
  const texts: string[] = [];
  for (let i = 0; i < count; i++) {
    const text = (rows[i] as SegmentRow).valueJson;
    const number = asJsonNumber(text);
    if (number === undefined) {
      kinds[i] = KIND_TEXT;
      texts.push(text);
    } else {
      kinds[i] = KIND_NUMBER;
      numbers.push(number);
    }
  }
  out.block(
    encodeSequence(
      rows.map((row) => row.tsUs),
      2,
    ),
  );
  out.block(
    encodeSequence(
      rows.map((row) => row.receivedUs),
      1,
    ),
  );
  out.block(encodeRuns(kinds));
  out.block(encodeNumbers(numbers));
  out.block(encodeDictionary(texts));
  out.block(encodeRuns(rows.map((row) => row.quality)));
  out.block(encodeDictionary(rows.map((row) => row.source)));
  return out.finish();
}

function decodePayload(payload: Uint8Array): SegmentRow[] {
  const input = new ByteReader(payload);
  const count = input.varint();
  const times = decodeSequence(input.block(), count, 2);
  const received = decodeSequence(input.block(), count, 1);
  const kinds = decodeRuns(input.block(), count);
  let numberCount = 0;
  for (let i = 0; i < count; i++) if (kinds[i] === KIND_NUMBER) numberCount++;
  const numbers = decodeNumbers(input.block(), numberCount);
  const texts = decodeDictionary(input.block(), count - numberCount);
  const qualities = decodeRuns(input.block(), count);
  const sources = decodeDictionary(input.block(), count);
  if (!input.done) throw new SegmentFormatError('has bytes after its columns');
  const rows = new Array<SegmentRow>(count);
  let n = 0;
  let t = 0;
  for (let i = 0; i < count; i++) {
    let valueJson: string;
    if (kinds[i] === KIND_NUMBER) valueJson = JSON.stringify(numbers[n++]);
    else if (kinds[i] === KIND_TEXT) valueJson = texts[t++] as string;
    else throw new SegmentFormatError(`has unknown value kind ${kinds[i]}`);
    rows[i] = {
      tsUs: times[i] as number,
      valueJson,
      quality: qualities[i] as number,
      source: sources[i] as string | null,
      receivedUs: received[i] as number,
    };
  }
  return rows;
}

/** The number whose JSON is exactly `text` (what JSON.stringify wrote), else undefined. */
function asJsonNumber(text: string): number | undefined {
  const first = text.charCodeAt(0);
  if (first !== 45 /* - */ && (first < 48 || first > 57)) return undefined;
  const number = Number(text);
  return Number.isFinite(number) && JSON.stringify(number) === text ? number : undefined;
}

/**
 * Integers (microsecond times) as zigzag varints of their differences of order `order` (1: deltas,
 * 2: delta-of-delta); raw doubles when a value is not a safe integer or a difference could leave the
 * range zigzag keeps exact.
 */
function encodeSequence(values: number[], order: 1 | 2): Uint8Array {
  const steps = new Array<number>(values.length);
  let previous = 0;
  let previousDelta = 0;
  let exact = true;
  for (let i = 0; i < values.length && exact; i++) {
    const value = values[i] as number;
    const delta = value - previous;
    const step = order === 2 ? delta - previousDelta : delta;
    exact = Number.isSafeInteger(value) && Number.isSafeInteger(delta) && Math.abs(step) < ZIGZAG_LIMIT;
    steps[i] = step;
    previous = value;
    previousDelta = delta;
  }
  const out = new ByteWriter();
  if (!exact) {
    out.byte(SEQUENCE_RAW);
    for (const value of values) out.float64(value);
    return out.finish();
  }
  out.byte(SEQUENCE_DELTAS);
  for (const step of steps) out.zigzag(step);
  return out.finish();
}

/** The column `encodeSequence` wrote (`order` as it was written with: 2 declared times, 1 receipt times). */
export function decodeSequence(encoded: Uint8Array, count: number, order: 1 | 2): Float64Array {
  const input = new ByteReader(encoded);
  const mode = input.byte();
  const out = new Float64Array(count);
  if (mode === SEQUENCE_RAW) {
    for (let i = 0; i < count; i++) out[i] = input.float64();
    return out;
  }
  if (mode !== SEQUENCE_DELTAS) throw new SegmentFormatError(`has unknown time encoding ${mode}`);
  let previous = 0;
  let previousDelta = 0;
  for (let i = 0; i < count; i++) {
    const step = input.zigzag();
    const delta = order === 2 ? previousDelta + step : step;
    previous += delta;
    previousDelta = delta;
    out[i] = previous;
  }
  return out;
}
