import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { detectImageType } from './image-type.js';

const PNG = Buffer.from('89504e470d0a1a0a0000000d49484452', 'hex');
const JPEG = Buffer.from('ffd8ffe000104a464946', 'hex');
const WEBP = Buffer.concat([Buffer.from('RIFF'), Buffer.from([0x1a, 0, 0, 0]), Buffer.from('WEBPVP8 ')]);

describe('logo image type by signature', () => {
  it('recognises PNG, JPEG and WebP by their leading bytes', () => {
    assert.equal(detectImageType(PNG), 'image/png');
    assert.equal(detectImageType(JPEG), 'image/jpeg');
    assert.equal(detectImageType(WEBP), 'image/webp');
  });

  it('refuses SVG, HTML, other RIFF files and truncated signatures', () => {
    assert.equal(detectImageType(Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"></svg>')), null);
    assert.equal(detectImageType(Buffer.from('<!doctype html><script>alert(1)</script>')), null);
    assert.equal(detectImageType(Buffer.concat([Buffer.from('RIFF\0\0\0\0WAVEfmt ')])), null);
    assert.equal(detectImageType(PNG.subarray(0, 7)), null);
    assert.equal(detectImageType(Buffer.alloc(0)), null);
  });
});
