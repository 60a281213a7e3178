import { ByteReader, ByteWriter, SegmentFormatError, ZIGZAG_LIMIT } from './byte-stream.js';
import { decodeGorilla, encodeGorilla } from './gorilla.js';

const SCALED = 0;
const GORILLA = 1;
/** The most decimal places tried: 21.375 is three, a counter zero. */
const MAX_SCALE = 9;
/** Scaled values stay below this so that their deltas stay exact in zigzag. */
const SCALED_LIMIT = ZIGZAG_LIMIT / 4;

/**
 * A column of numbers. When every value is an integer after multiplying by one power of ten (sensor
 * readings with two decimals: 21.37 is 2137 at scale 2; counters at scale 0) and dividing gives the
 * very same double back, the integers are stored as zigzag varint deltas; otherwise Gorilla XOR.
 */
export function encodeNumbers(values: ArrayLike<number>): Uint8Array {
  const out = new ByteWriter();
  const scale = decimalScale(values);
  if (scale === null) {
    out.byte(GORILLA);
    out.bytes(encodeGorilla(values));
    return out.finish();
  }
  out.byte(SCALED);
  out.byte(scale);
  const factor = 10 ** scale;
  let previous = 0;
  for (let i = 0; i < values.length; i++) {
    const scaled = Math.round((values[i] as number) * factor);
    out.zigzag(scaled - previous);
    previous = scaled;
  }
  return out.finish();
}

export function decodeNumbers(encoded: Uint8Array, count: number): Float64Array {
  const input = new ByteReader(encoded);
  const mode = input.byte();
  if (mode === GORILLA) return decodeGorilla(encoded.subarray(1), count);
  if (mode !== SCALED) throw new SegmentFormatError(`has an unknown number encoding ${mode}`);
  const factor = 10 ** input.byte();
  const out = new Float64Array(count);
  let previous = 0;
  for (let i = 0; i < count; i++) {
    previous += input.zigzag();
    out[i] = previous / factor;
  }
  return out;
}

/** The smallest scale at which every value round-trips exactly, or null (then Gorilla). */
export function decimalScale(values: ArrayLike<number>): number | null {
  if (values.length === 0) return 0;
  let scale = 0;
  for (let i = 0; i < values.length; i++) {
    const value = values[i] as number;
    while (!roundTrips(value, scale)) {
      scale++;
      if (scale > MAX_SCALE) return null;
    }
  }
  // A value checked at a smaller scale is checked again at the one chosen.
  for (let i = 0; i < values.length; i++) if (!roundTrips(values[i] as number, scale)) return null;
  return scale;
}

function roundTrips(value: number, scale: number): boolean {
  // -0 would come back as 0; NaN never equals itself; infinities fail the limit.
  if (Object.is(value, -0)) return false;
  const factor = 10 ** scale;
  const scaled = Math.round(value * factor);
  return Math.abs(scaled) < SCALED_LIMIT && Object.is(scaled / factor, value);
}
