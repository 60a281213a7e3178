import { ByteReader, SegmentFormatError } from '../codec/byte-stream.js';
import { decodeNumbers } from '../codec/number-column.js';
import { decodeDictionary, decodeDictionaryParts, decodeRuns } from '../codec/run-length.js';
import { decodeSequence, type SegmentRow, segmentPayload } from '../segment-codec.js';

const KIND_NUMBER = 0;
const KIND_TEXT = 1;

/**
 * A decoded segment kept as columns (typed arrays), each decoded the first time a reader asks for it:
 * an aggregate reads times and numbers only; a history page builds value objects for its own rows
 * only. The payload's columns, in the order `encodePayload` (segment-codec.ts) writes them: declared
 * times, receipt times, value kinds, numbers, texts, qualities, sources. Answers exactly what
 * `decodeSegment` answers, value by value.
 */
export class SegmentColumns {
  readonly count: number;
  /** Declared times, epoch µs, in the order encoded (by time for segments the store wrote). */
  readonly times: Float64Array;
  /** Whether `times` never decreases (then ranges are found by binary search). */
  readonly sorted: boolean;
  private readonly blocks: Uint8Array[];
  private numeric?: Float64Array;
  /** For a value that is not a JSON number as written: its index in `texts`; else -1 (undefined: none). */
  private textIndex?: Int32Array;
  private texts: (string | null)[] = [];
  private received?: Float64Array;
  private qualities?: Float64Array;
  private sources?: { entries: (string | null)[]; indexes: Float64Array };
  /** What the columns decoded so far take in memory, about (bytes). */
  bytes: number;
  /** Told the bytes of each column decoded after construction (the cache counts them). */
  onGrow?: (bytes: number) => void;

  constructor(segment: Uint8Array) {
    const input = new ByteReader(segmentPayload(segment));
    this.count = input.varint();
    this.blocks = [];
    for (let i = 0; i < 7; i++) this.blocks.push(input.block());
    if (!input.done) throw new SegmentFormatError('has bytes after its columns');
    this.times = decodeSequence(this.blocks[0] as Uint8Array, this.count, 2);
    let sorted = true;
    for (let i = 1; i < this.count && sorted; i++)
      sorted = (this.times[i] as number) >= (this.times[i - 1] as number);
    this.sorted = sorted;
    this.bytes = 256 + this.blocks.reduce((sum, block) => sum + block.length, 0) + this.times.byteLength;
  }

  /**
   * The number of each value (what `value_num` holds for a row: a JSON number, also one written in
   * another form such as `1.0`), NaN where the value is no number.
   */
  numbers(): Float64Array {
    if (this.numeric) return this.numeric;
    const kinds = decodeRuns(this.blocks[2] as Uint8Array, this.count);
    let numberCount = 0;
    for (let i = 0; i < this.count; i++) {
      const kind = kinds[i];
      if (kind === KIND_NUMBER) numberCount++;
      else if (kind !== KIND_TEXT) throw new SegmentFormatError(`has unknown value kind ${kind}`);
    }
    const dense = decodeNumbers(this.blocks[3] as Uint8Array, numberCount);
    if (numberCount === this.count) {
      this.numeric = dense;
    } else {
      this.texts = decodeDictionary(this.blocks[4] as Uint8Array, this.count - numberCount);
      const numeric = new Float64Array(this.count);
      const textIndex = new Int32Array(this.count);
      let n = 0;
      let t = 0;
      for (let i = 0; i < this.count; i++) {
        if (kinds[i] === KIND_NUMBER) {
          numeric[i] = dense[n++] as number;
          textIndex[i] = -1;
        } else {
          numeric[i] = numberOf(this.texts[t] as string) ?? Number.NaN;
          textIndex[i] = t++;
        }
      }
      this.numeric = numeric;
      this.textIndex = textIndex;
      this.grow(this.count * 4 + this.texts.reduce((sum, text) => sum + 48 + 2 * (text?.length ?? 0), 0));
    }
    this.grow(this.numeric.byteLength);
    return this.numeric;
  }

  private grow(bytes: number): void {
    this.bytes += bytes;
    this.onGrow?.(bytes);
  }

  /** The index of the first value declared at or after `tsUs` (of the first value if not sorted). */
  lowerBound(tsUs: number): number {
    if (!this.sorted) return 0;
    let lo = 0;
    let hi = this.count;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if ((this.times[mid] as number) < tsUs) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /** The value at `i` as `decodeSegment` answers it. */
  row(i: number): SegmentRow {
    const numeric = this.numbers();
    if (!this.received) {
      this.received = decodeSequence(this.blocks[1] as Uint8Array, this.count, 1);
      this.qualities = decodeRuns(this.blocks[5] as Uint8Array, this.count);
      this.sources = decodeDictionaryParts(this.blocks[6] as Uint8Array, this.count);
      this.grow(this.count * 24);
    }
    const t = this.textIndex === undefined ? -1 : (this.textIndex[i] as number);
    const source = this.sources?.entries[this.sources.indexes[i] as number];
    if (source === undefined) throw new SegmentFormatError('names a dictionary entry it does not hold');
    return {
      tsUs: this.times[i] as number,
      valueJson: t < 0 ? JSON.stringify(numeric[i]) : (this.texts[t] as string),
      quality: this.qualities?.[i] as number,
      source,
      receivedUs: this.received[i] as number,
    };
  }
}

/** The number a stored value is (what `value_num` holds for a row), else null. */
export function numberOf(valueJson: string): number | null {
  const first = valueJson.charCodeAt(0);
  return first === 45 || (first >= 48 && first <= 57) ? Number(valueJson) : null;
}
