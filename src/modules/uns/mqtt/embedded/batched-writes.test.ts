import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { describe, it } from 'node:test';
import { BatchedWrites } from './batched-writes.js';

/** A stream recording each system-call-like write it is given: the chunks of one write, joined. */
function recording() {
  const writes: string[] = [];
  const stream = new Writable({
    write(chunk, _encoding, done) {
      writes.push(String(chunk));
      done();
    },
    writev(chunks, done) {
      writes.push(chunks.map(({ chunk }) => String(chunk)).join(''));
      done();
    },
  });
  return { stream, writes };
}

const turn = () => new Promise((resolve) => setImmediate(resolve));

describe('BatchedWrites', () => {
  it('lets the writes of the next turn leave in one write, and releases the connection after it', async () => {
    const batched = new BatchedWrites();
    const { stream, writes } = recording();
    batched.hold(stream);
    batched.hold(stream);
    await turn();
    for (const part of ['a', 'b', 'c']) stream.write(part);
    assert.deepEqual(writes, []);
    await turn();
    assert.deepEqual(writes, ['abc']);
    assert.equal(stream.writableCorked, 0);
    stream.write('d');
    assert.deepEqual(writes, ['abc', 'd'], 'written at once when nothing holds it');
  });

  it('holds each connection once per turn, and again in a later turn', async () => {
    const batched = new BatchedWrites();
    const [first, second] = [recording(), recording()];
    batched.hold(first.stream);
    batched.hold(second.stream);
    first.stream.write('1');
    second.stream.write('2');
    await turn();
    await turn();
    assert.deepEqual([first.writes, second.writes], [['1'], ['2']]);
    batched.hold(first.stream);
    first.stream.write('3');
    first.stream.write('4');
    await turn();
    await turn();
    assert.deepEqual(first.writes, ['1', '34']);
    assert.equal(first.stream.writableCorked, 0);
  });
});
