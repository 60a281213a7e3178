import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { v7 as uuidV7 } from 'uuid';
import { timeOrderedId } from './time-ordered-id.js';

const V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe('timeOrderedId', () => {
  it('is an RFC 9562 version 7 UUID with the RFC 4122 variant', () => {
    const variants = new Set<string>();
    for (let i = 0; i < 1_000; i++) {
      const id = timeOrderedId(Date.now());
      assert.match(id, V7);
      variants.add(id[19]!);
    }
    // The variant's two low bits are random too.
    assert.deepEqual([...variants].sort(), ['8', '9', 'a', 'b']);
  });

  it('carries the millisecond timestamp in its first 48 bits, as the uuid package does', () => {
    const at = Date.UTC(2026, 10, 23, 9, 30, 0, 123);
    const ours = timeOrderedId(at);
    const theirs = uuidV7({ msecs: at });
    assert.equal(ours.slice(0, 13), theirs.slice(0, 13));
    assert.equal(Number.parseInt(ours.slice(0, 8) + ours.slice(9, 13), 16), at);
  });

  it('sorts by time across milliseconds', () => {
    const at = Date.now();
    const ids = [at + 2, at, at + 1, at + 1_000_000].map(timeOrderedId);
    assert.deepEqual([...ids].sort(), [ids[1], ids[2], ids[0], ids[3]]);
  });

  it('does not repeat within one millisecond', () => {
    const ids = new Set(Array.from({ length: 10_000 }, () => timeOrderedId(1_700_000_000_000)));
    assert.equal(ids.size, 10_000);
  });
});
