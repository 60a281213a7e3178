import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  jpegImage,
  pngImage,
  webpExtendedImage,
  webpLosslessImage,
  webpLossyImage,
} from '../../../../test/helpers/images.js';
import { readImageDimensions } from './image-dimensions.js';
import { detectImageType } from './image-type.js';

const read = (bytes: Buffer) => readImageDimensions(bytes, detectImageType(bytes)!);
const problemOf = (bytes: Buffer) => {
  const result = read(bytes);
  assert.ok('problem' in result, `expected a problem, read ${JSON.stringify(result)}`);
  return result.problem;
};

describe('logo dimensions read from the header', () => {
  it('reads what PNG, JPEG and the three WebP kinds declare, up to 30000x30000', () => {
    assert.deepEqual(read(pngImage(30000, 20000)), { width: 30000, height: 20000 });
    assert.deepEqual(read(jpegImage(30000, 20000)), { width: 30000, height: 20000 });
    assert.deepEqual(read(jpegImage(640, 480, 0xc2)), { width: 640, height: 480 });
    assert.deepEqual(read(webpLosslessImage(16000, 12000)), { width: 16000, height: 12000 });
    assert.deepEqual(read(webpLossyImage(16000, 12000)), { width: 16000, height: 12000 });
    assert.deepEqual(read(webpExtendedImage(30000, 20000)), { width: 30000, height: 20000 });
    assert.deepEqual(read(webpLosslessImage(1, 1)), { width: 1, height: 1 });
  });

  it('refuses truncated headers of every format', () => {
    assert.match(problemOf(pngImage(10, 10).subarray(0, 24)), /PNG header is truncated/);
    const jpeg = jpegImage(10, 10);
    assert.match(problemOf(jpeg.subarray(0, jpeg.indexOf(Buffer.from([0xff, 0xc0])) + 6)), /past the end/);
    assert.match(problemOf(jpeg.subarray(0, 22)), /truncated before its frame header/);
    assert.match(problemOf(webpLosslessImage(10, 10).subarray(0, 18)), /WebP header is truncated/);
  });

  it('refuses headers that disagree with the file: chunk lengths, checksums, RIFF sizes', () => {
    const png = pngImage(10, 10);
    const longIhdr = Buffer.from(png);
    longIhdr.writeUInt32BE(0x7fffffff, 8);
    assert.match(problemOf(longIhdr), /IHDR chunk declares 2147483647 bytes/);
    // The size rewritten to 1x1 without its checksum: the header lies about what was written.
    const relabelled = Buffer.from(png);
    relabelled.writeUInt32BE(1, 16);
    assert.match(problemOf(relabelled), /does not match its checksum/);

    const jpeg = jpegImage(10, 10);
    const lyingSegment = Buffer.from(jpeg);
    lyingSegment.writeUInt16BE(0xfff0, 4);
    assert.match(problemOf(lyingSegment), /segment at byte 2 declares 65520 bytes, past the end/);

    const webp = webpLosslessImage(10, 10);
    const lyingRiff = Buffer.from(webp);
    lyingRiff.writeUInt32LE(1_000_000, 4);
    assert.match(problemOf(lyingRiff), /declares 1000000 bytes after its RIFF header/);
    const lyingChunk = Buffer.from(webp);
    lyingChunk.writeUInt32LE(1_000_000, 16);
    assert.match(problemOf(lyingChunk), /chunk VP8L declares 1000000 bytes, past the end/);
  });

  it('refuses a JPEG without a frame header before its scan, with a height left to a DNL marker, or of a kind browsers do not decode', () => {
    const jpeg = jpegImage(10, 10);
    const sof = jpeg.indexOf(Buffer.from([0xff, 0xc0]));
    const withoutFrame = Buffer.concat([jpeg.subarray(0, sof), jpeg.subarray(sof + 13)]);
    assert.match(problemOf(withoutFrame), /no frame header before its image data/);
    assert.match(problemOf(jpegImage(10, 0)), /invalid size 10x0/);
    assert.match(problemOf(jpegImage(10, 10, 0xc3)), /baseline or progressive/);
  });

  it('refuses a PNG of size 0 and a lossy WebP that is not a key frame', () => {
    assert.match(problemOf(pngImage(0, 10)), /invalid size 0x10/);
    const interFrame = webpLossyImage(10, 10);
    interFrame[20] = interFrame[20]! | 1;
    assert.match(problemOf(interFrame), /key frame/);
  });
});
