import { ByteReader, ByteWriter, SegmentFormatError } from './byte-stream.js';

/**
 * Gorilla's XOR encoding of doubles (Pelkonen et al., "Gorilla: A Fast, Scalable, In-Memory Time Series
 * Database", VLDB 2015, section 4.1.2): the first value whole, then each value XORed with the one
 * before; a zero XOR is one bit, else the meaningful bits inside the previous leading/trailing-zero
 * window, or a new window (5 bits of leading zeros, 6 of length). Bit-exact: NaN, -0, infinities and
 * subnormals come back as they went in. Doubles are handled as two 32-bit halves (no BigInt).
 */
export function encodeGorilla(values: ArrayLike<number>): Uint8Array {
  const bits = new BitWriter();
  const halves = new DataView(new ArrayBuffer(8));
  let prevHi = 0;
  let prevLo = 0;
  let prevLeading = -1;
  let prevTrailing = 0;
  for (let i = 0; i < values.length; i++) {
    halves.setFloat64(0, values[i] as number);
    const hi = halves.getUint32(0);
    const lo = halves.getUint32(4);
    if (i === 0) {
      bits.write(hi, 32);
      bits.write(lo, 32);
    } else {
      const xorHi = (hi ^ prevHi) >>> 0;
      const xorLo = (lo ^ prevLo) >>> 0;
      if (xorHi === 0 && xorLo === 0) {
        bits.write(0, 1);
      } else {
        const leading = Math.min(31, xorHi === 0 ? 32 + Math.clz32(xorLo) : Math.clz32(xorHi));
        const trailing = xorLo === 0 ? 32 + ctz32(xorHi) : ctz32(xorLo);
        if (prevLeading >= 0 && leading >= prevLeading && trailing >= prevTrailing) {
          bits.write(0b10, 2);
          writeMeaningful(bits, xorHi, xorLo, prevTrailing, 64 - prevLeading - prevTrailing);
        } else {
          const length = 64 - leading - trailing;
          bits.write(0b11, 2);
          bits.write(leading, 5);
          bits.write(length & 63, 6); // 64 meaningful bits are written as 0
          writeMeaningful(bits, xorHi, xorLo, trailing, length);
          prevLeading = leading;
          prevTrailing = trailing;
        }
      }
    }
    prevHi = hi;
    prevLo = lo;
  }
  return bits.finish();
}

export function decodeGorilla(encoded: Uint8Array, count: number): Float64Array {
  const out = new Float64Array(count);
  if (count === 0) return out;
  const bits = new BitReader(encoded);
  const halves = new DataView(new ArrayBuffer(8));
  let hi = bits.read(32);
  let lo = bits.read(32);
  let leading = 0;
  let trailing = 0;
  halves.setUint32(0, hi);
  halves.setUint32(4, lo);
  out[0] = halves.getFloat64(0);
  for (let i = 1; i < count; i++) {
    if (bits.read(1) === 1) {
      if (bits.read(1) === 1) {
        leading = bits.read(5);
        const length = bits.read(6) || 64;
        trailing = 64 - leading - length;
        if (trailing < 0) throw new SegmentFormatError('holds a float window wider than 64 bits');
      }
      const [xorHi, xorLo] = readMeaningful(bits, trailing, 64 - leading - trailing);
      hi = (hi ^ xorHi) >>> 0;
      lo = (lo ^ xorLo) >>> 0;
      halves.setUint32(0, hi);
      halves.setUint32(4, lo);
    }
    out[i] = halves.getFloat64(0);
  }
  return out;
}

function ctz32(value: number): number {
  return value === 0 ? 32 : 31 - Math.clz32(value & -value);
}

/** Writes bits [trailing, trailing + length) of the 64-bit value (hi, lo). */
function writeMeaningful(bits: BitWriter, hi: number, lo: number, trailing: number, length: number): void {
  let shiftedHi: number;
  let shiftedLo: number;
  if (trailing >= 32) {
    shiftedHi = 0;
    shiftedLo = hi >>> (trailing - 32);
  } else if (trailing > 0) {
    shiftedHi = hi >>> trailing;
    shiftedLo = ((lo >>> trailing) | (hi << (32 - trailing))) >>> 0;
  } else {
    shiftedHi = hi;
    shiftedLo = lo;
  }
  if (length > 32) {
    bits.write(shiftedHi, length - 32);
    bits.write(shiftedLo, 32);
  } else {
    bits.write(shiftedLo, length);
  }
}

function readMeaningful(bits: BitReader, trailing: number, length: number): [number, number] {
  let hi = 0;
  let lo: number;
  if (length > 32) {
    hi = bits.read(length - 32);
    lo = bits.read(32);
  } else {
    lo = bits.read(length);
  }
  if (trailing >= 32) return [(lo << (trailing - 32)) >>> 0, 0];
  if (trailing > 0) return [((hi << trailing) | (lo >>> (32 - trailing))) >>> 0, (lo << trailing) >>> 0];
  return [hi >>> 0, lo >>> 0];
}

class BitWriter {
  private readonly bytes = new ByteWriter();
  private current = 0;
  private used = 0;

  /** Writes the low `n` bits of `value` (n <= 32), most significant first. */
  write(value: number, n: number): void {
    let left = n;
    while (left > 0) {
      const free = 8 - this.used;
      const take = Math.min(free, left);
      const chunk = Math.floor(value / 2 ** (left - take)) % 2 ** take;
      this.current |= chunk << (free - take);
      this.used += take;
      left -= take;
      if (this.used === 8) {
        this.bytes.byte(this.current);
        this.current = 0;
        this.used = 0;
      }
    }
  }

  finish(): Uint8Array {
    if (this.used > 0) this.bytes.byte(this.current);
    return this.bytes.finish();
  }
}

class BitReader {
  private readonly bytes: ByteReader;
  private current = 0;
  private left = 0;

  constructor(encoded: Uint8Array) {
    this.bytes = new ByteReader(encoded);
  }

  read(n: number): number {
    let result = 0;
    let need = n;
    while (need > 0) {
      if (this.left === 0) {
        this.current = this.bytes.byte();
        this.left = 8;
      }
      const take = Math.min(this.left, need);
      const chunk = (this.current >>> (this.left - take)) & ((1 << take) - 1);
      result = result * 2 ** take + chunk;
      this.left -= take;
      need -= take;
    }
    return result;
  }
}
