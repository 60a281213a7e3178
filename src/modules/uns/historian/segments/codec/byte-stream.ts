/**
 * Bytes of a segment: unsigned LEB128 varints over the integers a double holds exactly (up to 2^53),
 * zigzag for signed ones, float64 and UTF-8 text. Plain arithmetic, not 32-bit bit operations, so
 * that microsecond timestamps (about 2^51) pass whole.
 */
export class ByteWriter {
  private buffer = new Uint8Array(256);
  private view = new DataView(this.buffer.buffer);
  length = 0;

  private reserve(n: number): void {
    if (this.length + n <= this.buffer.length) return;
    let size = this.buffer.length * 2;
    while (size < this.length + n) size *= 2;
    const next = new Uint8Array(size);
    next.set(this.buffer.subarray(0, this.length));
    this.buffer = next;
    this.view = new DataView(next.buffer);
  }

  byte(value: number): void {
    this.reserve(1);
    this.buffer[this.length++] = value;
  }

  /** An unsigned integer below 2^53. */
  varint(value: number): void {
    this.reserve(8);
    let n = value;
    while (n >= 0x80) {
      this.buffer[this.length++] = (n % 0x80) | 0x80;
      n = Math.floor(n / 0x80);
    }
    this.buffer[this.length++] = n;
  }

  /** A signed integer of magnitude below 2^52. */
  zigzag(value: number): void {
    this.varint(toZigzag(value));
  }

  float64(value: number): void {
    this.reserve(8);
    this.view.setFloat64(this.length, value);
    this.length += 8;
  }

  bytes(value: Uint8Array): void {
    this.reserve(value.length);
    this.buffer.set(value, this.length);
    this.length += value.length;
  }

  /** A length-prefixed UTF-8 string. */
  text(value: string): void {
    const encoded = Buffer.from(value, 'utf8');
    this.varint(encoded.length);
    this.bytes(encoded);
  }

  /** A length-prefixed block (a column), so that a reader can skip it. */
  block(value: Uint8Array): void {
    this.varint(value.length);
    this.bytes(value);
  }

  finish(): Uint8Array {
    return this.buffer.slice(0, this.length);
  }
}

export class ByteReader {
  private readonly view: DataView;
  offset = 0;

  constructor(private readonly buffer: Uint8Array) {
    this.view = new DataView(buffer.buffer, buffer.byteOffset, buffer.byteLength);
  }

  private need(n: number): void {
    if (this.offset + n > this.buffer.length) throw new SegmentFormatError('ends early');
  }

  byte(): number {
    this.need(1);
    return this.buffer[this.offset++] as number;
  }

  varint(): number {
    let result = 0;
    let scale = 1;
    for (;;) {
      const b = this.byte();
      result += (b & 0x7f) * scale;
      if (b < 0x80) return result;
      scale *= 0x80;
      if (scale > 2 ** 56) throw new SegmentFormatError('holds a varint longer than 8 bytes');
    }
  }

  zigzag(): number {
    return fromZigzag(this.varint());
  }

  float64(): number {
    this.need(8);
    const value = this.view.getFloat64(this.offset);
    this.offset += 8;
    return value;
  }

  bytes(n: number): Uint8Array {
    this.need(n);
    const out = this.buffer.subarray(this.offset, this.offset + n);
    this.offset += n;
    return out;
  }

  text(): string {
    const n = this.varint();
    const b = this.bytes(n);
    return Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString('utf8');
  }

  block(): Uint8Array {
    return this.bytes(this.varint());
  }

  get done(): boolean {
    return this.offset >= this.buffer.length;
  }
}

/** A segment's bytes that do not decode: a format error, never a silently wrong value. */
export class SegmentFormatError extends Error {
  constructor(detail: string) {
    super(`historian segment ${detail}`);
    this.name = 'SegmentFormatError';
  }
}

/** 0, -1, 1, -2, ... as 0, 1, 2, 3, ...; exact while |value| < 2^52. */
export function toZigzag(value: number): number {
  return value >= 0 ? value * 2 : -value * 2 - 1;
}

export function fromZigzag(value: number): number {
  return value % 2 === 0 ? value / 2 : -(value + 1) / 2;
}

/** Zigzag keeps exact integers below this magnitude (its result stays below 2^53). */
export const ZIGZAG_LIMIT = 2 ** 52;
