import { crc32, deflateSync } from 'node:zlib';

/**
 * Small real images for the logo tests, built byte by byte (no image tool on the machine): each is a
 * whole file a browser decodes when its declared size is small, with its header declaring `width` x
 * `height` whatever the size (the pixel data of a large one is short, as in a decompression bomb's header).
 */

function pngChunk(type: string, data: Buffer): Buffer {
  const head = Buffer.alloc(8);
  head.writeUInt32BE(data.length, 0);
  head.write(type, 4, 'latin1');
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(Buffer.concat([head.subarray(4), data])));
  return Buffer.concat([head, data, crc]);
}

/** A grey 8-bit PNG; its pixel rows are only written (all zero) when small. */
export function pngImage(width: number, height: number): Buffer {
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr.set([8, 0, 0, 0, 0], 8);
  const rows = width * height <= 4096 ? Buffer.alloc((width + 1) * height) : Buffer.alloc(0);
  return Buffer.concat([
    Buffer.from('89504e470d0a1a0a', 'hex'),
    pngChunk('IHDR', ihdr),
    pngChunk('IDAT', deflateSync(rows)),
    pngChunk('IEND', Buffer.alloc(0)),
  ]);
}

const segment = (marker: number, data: Buffer) => {
  const head = Buffer.from([0xff, marker, 0, 0]);
  head.writeUInt16BE(data.length + 2, 2);
  return Buffer.concat([head, data]);
};

/**
 * A baseline grey JPEG: JFIF APP0, one quantisation table, the frame header (SOF0) with `width` x
 * `height`, one-code Huffman tables and a scan whose every 8x8 block is flat (DC difference 0, then end
 * of block: two 0 bits a block).
 */
export function jpegImage(width: number, height: number, frameMarker = 0xc0): Buffer {
  const sof = Buffer.from([8, 0, 0, 0, 0, 1, 1, 0x11, 0]);
  sof.writeUInt16BE(height, 1);
  sof.writeUInt16BE(width, 3);
  const oneCode = (tableClass: number) => segment(0xc4, Buffer.from([tableClass, 1, ...Buffer.alloc(15), 0]));
  const blocks = Math.ceil(width / 8) * Math.ceil(height / 8);
  const scanBits = blocks <= 4096 ? blocks * 2 : 2;
  const scan = Buffer.alloc(Math.ceil(scanBits / 8));
  // The bits after the last block are padded with 1s (T.81 F.1.2.3).
  const used = scanBits % 8;
  if (used !== 0) scan[scan.length - 1] = 0xff >> used;
  return Buffer.concat([
    Buffer.from([0xff, 0xd8]),
    segment(0xe0, Buffer.from('4a46494600010100000100010000', 'hex')),
    segment(0xdb, Buffer.concat([Buffer.from([0]), Buffer.alloc(64, 1)])),
    segment(frameMarker, sof),
    oneCode(0x00),
    oneCode(0x10),
    segment(0xda, Buffer.from([1, 1, 0, 0, 0x3f, 0])),
    scan,
    Buffer.from([0xff, 0xd9]),
  ]);
}

function riff(chunk: string, data: Buffer): Buffer {
  const padded = data.length % 2 === 0 ? data : Buffer.concat([data, Buffer.alloc(1)]);
  const head = Buffer.alloc(20);
  head.write('RIFF', 0, 'latin1');
  head.writeUInt32LE(12 + padded.length, 4);
  head.write('WEBP', 8, 'latin1');
  head.write(chunk, 12, 'latin1');
  head.writeUInt32LE(data.length, 16);
  return Buffer.concat([head, padded]);
}

/** A 1x1 lossless WebP (the image browsers are probed with), its VP8L header rewritten to `width` x `height`. */
export function webpLosslessImage(width: number, height: number): Buffer {
  const data = Buffer.from('2f00000010071011118888fe07', 'hex');
  const bits = (data.readUInt32LE(1) & ~0x0fffffff) | ((height - 1) << 14) | (width - 1);
  data.writeUInt32LE(bits >>> 0, 1);
  return riff('VP8L', data);
}

/** A 1x1 lossy WebP (the image browsers are probed with), its key frame header rewritten to `width` x `height`. */
export function webpLossyImage(width: number, height: number): Buffer {
  const data = Buffer.from('3001009d012a010001000ec0fe25a400037000000000', 'hex');
  data.writeUInt16LE(width, 6);
  data.writeUInt16LE(height, 8);
  return riff('VP8 ', data);
}

/** An extended WebP: a VP8X canvas of `width` x `height` around a 1x1 lossless image. */
export function webpExtendedImage(width: number, height: number): Buffer {
  const vp8x = Buffer.alloc(10);
  vp8x.writeUIntLE(width - 1, 4, 3);
  vp8x.writeUIntLE(height - 1, 7, 3);
  const lossless = webpLosslessImage(1, 1).subarray(12);
  const head = Buffer.alloc(20);
  head.write('RIFF', 0, 'latin1');
  head.writeUInt32LE(4 + 18 + lossless.length, 4);
  head.write('WEBPVP8X', 8, 'latin1');
  head.writeUInt32LE(10, 16);
  return Buffer.concat([head, vp8x, lossless]);
}
