import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import type { Socket } from 'node:net';
import { describe, it } from 'node:test';
import { guardPacketSize } from './packet-size-guard.js';

const MAX = 1000;

/** A packet with `bodyLength` body bytes: fixed header byte, remaining length (variable byte integer), body. */
function packet(bodyLength: number): Buffer {
  const length: number[] = [];
  let n = bodyLength;
  do {
    let byte = n % 128;
    n = Math.floor(n / 128);
    if (n > 0) byte |= 0x80;
    length.push(byte);
  } while (n > 0);
  return Buffer.concat([Buffer.from([0x30, ...length]), Buffer.alloc(bodyLength, 0x41)]);
}

/** Feeds `chunks` to a guarded fake socket; returns the announced lengths it refused. */
function feed(chunks: Buffer[]): number[] {
  const socket = new EventEmitter() as unknown as Socket;
  const refused: number[] = [];
  guardPacketSize(socket, MAX, (announced) => refused.push(announced));
  for (const chunk of chunks) socket.emit('data', chunk);
  return refused;
}

/** Splits `bytes` into chunks of `size` bytes. */
const split = (bytes: Buffer, size: number) =>
  Array.from({ length: Math.ceil(bytes.length / size) }, (_, i) => bytes.subarray(i * size, (i + 1) * size));

describe('guardPacketSize', () => {
  it('lets packets up to the limit through, many in a chunk or one split anywhere', () => {
    const stream = Buffer.concat([packet(0), packet(1), packet(127), packet(128), packet(MAX), packet(5)]);
    assert.deepEqual(feed([stream]), []);
    for (const size of [1, 2, 3, 7, 130])
      assert.deepEqual(feed(split(stream, size)), [], `chunks of ${size}`);
  });

  it('refuses a packet announcing more than the limit once its length is read, before its body', () => {
    assert.deepEqual(feed([packet(MAX + 1).subarray(0, 3)]), [MAX + 1]);
    assert.deepEqual(feed(split(packet(MAX + 1).subarray(0, 3), 1)), [MAX + 1]);
  });

  it('finds the oversized packet after well-sized ones, and refuses only once', () => {
    const stream = Buffer.concat([packet(10), packet(MAX), Buffer.from([0x30, 0xff, 0xff, 0xff, 0x7f, 0])]);
    assert.deepEqual(feed(split(stream, 4)), [127 + 127 * 128]);
  });

  it('refuses a malformed length of more than four bytes', () => {
    assert.equal(feed([Buffer.from([0x10, 0x80, 0x80, 0x80, 0x80, 0x01])]).length, 1);
  });
});
