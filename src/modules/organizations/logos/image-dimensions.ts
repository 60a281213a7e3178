import { crc32 } from 'node:zlib';
import type { LogoContentType } from './image-type.js';

/** An image's size as its header declares it, in pixels. */
export interface ImageDimensions {
  width: number;
  height: number;
}

/** What the header declares, or why it cannot be believed (truncated, or inconsistent with the file). */
export type DimensionsResult = ImageDimensions | { problem: string };

/**
 * Reads the width and height an image's header declares, checking that the header is whole and agrees
 * with the file around it, without decoding a pixel. A browser allocates what this header declares
 * before it decodes, so the header is what a size limit must judge. `type` comes from `detectImageType`.
 */
export function readImageDimensions(bytes: Uint8Array, type: LogoContentType): DimensionsResult {
  const view = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (type === 'image/png') return pngDimensions(view);
  if (type === 'image/jpeg') return jpegDimensions(view);
  return webpDimensions(view);
}

const problem = (text: string) => ({ problem: text });

/**
 * PNG (PNG spec §5.3, §11.2.2): the first chunk after the 8-byte signature must be IHDR, 13 bytes of
 * data, and its CRC must match; width and height are 1 to 2^31-1.
 */
function pngDimensions(bytes: Buffer): DimensionsResult {
  if (bytes.length < 33) return problem('the PNG header is truncated (IHDR needs 33 bytes)');
  const length = bytes.readUInt32BE(8);
  if (bytes.toString('latin1', 12, 16) !== 'IHDR')
    return problem('the PNG does not start with its IHDR chunk');
  if (length !== 13) return problem(`the PNG's IHDR chunk declares ${length} bytes; it has 13`);
  if (crc32(bytes.subarray(12, 29)) !== bytes.readUInt32BE(29)) {
    return problem("the PNG's IHDR chunk does not match its checksum");
  }
  const width = bytes.readUInt32BE(16);
  const height = bytes.readUInt32BE(20);
  if (width === 0 || height === 0 || width > 0x7fffffff || height > 0x7fffffff) {
    return problem(`the PNG declares an invalid size ${width}x${height}`);
  }
  return { width, height };
}

// Start-of-frame markers browsers decode: baseline, extended sequential and progressive (ITU T.81 B.1.1.3).
const DECODED_FRAMES = new Set([0xc0, 0xc1, 0xc2]);
const OTHER_FRAMES = new Set([0xc3, 0xc5, 0xc6, 0xc7, 0xc9, 0xca, 0xcb, 0xcd, 0xce, 0xcf]);

/**
 * JPEG (ITU T.81 B.1): walks the marker segments from SOI to the first frame header (SOF), each
 * segment's length checked against the file, and reads the frame's size. A scan or the end before any
 * frame header, a height of 0 (to be defined by a later DNL marker) and frame types browsers do not decode
 * (lossless, arithmetic, hierarchical) are refused.
 */
function jpegDimensions(bytes: Buffer): DimensionsResult {
  let at = 2;
  for (;;) {
    if (at + 2 > bytes.length) return problem('the JPEG header is truncated before its frame header');
    if (bytes[at] !== 0xff) return problem(`the JPEG has no marker at byte ${at}`);
    const marker = bytes[at + 1]!;
    // Fill bytes (0xFF) may precede a marker; standalone markers carry no length.
    if (marker === 0xff) {
      at++;
      continue;
    }
    if (marker === 0x01 || (marker >= 0xd0 && marker <= 0xd7)) {
      at += 2;
      continue;
    }
    if (marker === 0xda || marker === 0xd9 || marker === 0xd8) {
      return problem('the JPEG has no frame header before its image data');
    }
    if (at + 4 > bytes.length) return problem('the JPEG header is truncated before its frame header');
    const length = bytes.readUInt16BE(at + 2);
    if (length < 2 || at + 2 + length > bytes.length) {
      return problem(`the JPEG segment at byte ${at} declares ${length} bytes, past the end of the file`);
    }
    if (DECODED_FRAMES.has(marker) || OTHER_FRAMES.has(marker)) {
      if (!DECODED_FRAMES.has(marker)) {
        return problem('the JPEG must be baseline or progressive (browsers decode no other kind)');
      }
      if (length < 8) return problem(`the JPEG frame header declares ${length} bytes; it needs 8 or more`);
      const height = bytes.readUInt16BE(at + 5);
      const width = bytes.readUInt16BE(at + 7);
      if (width === 0 || height === 0) return problem(`the JPEG declares an invalid size ${width}x${height}`);
      return { width, height };
    }
    at += 2 + length;
  }
}

/**
 * WebP (RFC 9649): the RIFF size must be even and lie within the file, the first chunk within the RIFF
 * data; the size is the VP8X canvas (24-bit width-1 and height-1, §2.7.1, which frames and the image
 * must fit), the VP8L header (14-bit width-1 and height-1 after the 0x2F signature, §3.2.1), or the VP8
 * key frame header (14-bit sizes after the start code 9D 01 2A, RFC 6386 §9.1).
 */
function webpDimensions(bytes: Buffer): DimensionsResult {
  if (bytes.length < 20) return problem('the WebP header is truncated');
  const riffSize = bytes.readUInt32LE(4);
  if (riffSize % 2 !== 0 || riffSize < 12 || 8 + riffSize > bytes.length) {
    return problem(
      `the WebP declares ${riffSize} bytes after its RIFF header; the file has ${bytes.length - 8}`,
    );
  }
  const chunk = bytes.toString('latin1', 12, 16);
  const chunkSize = bytes.readUInt32LE(16);
  if (20 + chunkSize > 8 + riffSize) {
    return problem(`the WebP chunk ${chunk.trim()} declares ${chunkSize} bytes, past the end of the file`);
  }
  const data = bytes.subarray(20, 20 + chunkSize);
  let size: ImageDimensions;
  if (chunk === 'VP8X') {
    if (data.length < 10) return problem('the WebP VP8X header is truncated');
    size = { width: data.readUIntLE(4, 3) + 1, height: data.readUIntLE(7, 3) + 1 };
  } else if (chunk === 'VP8L') {
    if (data.length < 5 || data[0] !== 0x2f)
      return problem('the WebP lossless header is truncated or invalid');
    const bits = data.readUInt32LE(1);
    size = { width: (bits & 0x3fff) + 1, height: ((bits >>> 14) & 0x3fff) + 1 };
  } else if (chunk === 'VP8 ') {
    if (data.length < 10) return problem('the WebP lossy header is truncated');
    if ((data[0]! & 1) !== 0 || data[3] !== 0x9d || data[4] !== 0x01 || data[5] !== 0x2a) {
      return problem('the WebP lossy header does not start with a key frame');
    }
    size = { width: data.readUInt16LE(6) & 0x3fff, height: data.readUInt16LE(8) & 0x3fff };
    if (size.width === 0 || size.height === 0) {
      return problem(`the WebP declares an invalid size ${size.width}x${size.height}`);
    }
  } else {
    return problem(`the WebP starts with an unknown chunk ${JSON.stringify(chunk)}`);
  }
  return size;
}
