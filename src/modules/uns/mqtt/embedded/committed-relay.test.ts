import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CommittedRelay } from './committed-relay.js';

/** A relay whose deliveries complete only when the test says so. */
function recording(maxInFlight?: number) {
  const relayed: number[] = [];
  const completions: (() => void)[] = [];
  const relay = new CommittedRelay<number>((item, done) => {
    relayed.push(item);
    completions.push(done);
  }, maxInFlight);
  /** Completes the relays running now (not those they start). */
  const completeAll = () => {
    for (const done of completions.splice(0)) done();
  };
  return { relay, relayed, completeAll };
}

describe('CommittedRelay', () => {
  it('relays in the order received, whatever order the commits settle in', () => {
    const { relay, relayed, completeAll } = recording();
    const entries = [1, 2, 3, 4].map((n) => relay.add(n));
    relay.settle(entries[2]!, true);
    relay.settle(entries[1]!, true);
    assert.deepEqual(relayed, [], 'nothing passes the first, still pending');
    relay.settle(entries[0]!, true);
    assert.deepEqual(relayed, [1, 2, 3]);
    relay.settle(entries[3]!, true);
    completeAll();
    assert.deepEqual(relayed, [1, 2, 3, 4]);
    assert.equal(relay.backlog, 0);
  });

  it('skips refused publishes and never relays a publish twice', () => {
    const { relay, relayed } = recording();
    const [a, b, c] = [1, 2, 3].map((n) => relay.add(n));
    relay.settle(b!, false);
    relay.settle(a!, true);
    relay.settle(a!, true);
    relay.settle(c!, true);
    relay.settle(b!, true);
    assert.deepEqual(relayed, [1, 3]);
  });

  it('keeps at most maxInFlight relays running and counts the rest in the backlog', () => {
    const { relay, relayed, completeAll } = recording(2);
    const entries = [1, 2, 3, 4, 5].map((n) => relay.add(n));
    assert.equal(relay.backlog, 5);
    for (const entry of entries) relay.settle(entry, true);
    assert.deepEqual(relayed, [1, 2]);
    assert.equal(relay.backlog, 3);
    completeAll();
    assert.deepEqual(relayed, [1, 2, 3, 4]);
    completeAll();
    completeAll();
    assert.deepEqual(relayed, [1, 2, 3, 4, 5]);
    assert.equal(relay.backlog, 0);
  });

  it('handles a relay that completes at once without relaying anything twice', () => {
    const relayed: number[] = [];
    const relay = new CommittedRelay<number>((item, done) => {
      relayed.push(item);
      done();
    }, 1);
    const entries = Array.from({ length: 3000 }, (_, n) => relay.add(n));
    for (let i = entries.length - 1; i >= 0; i--) relay.settle(entries[i]!, i % 7 !== 3);
    assert.deepEqual(
      relayed,
      Array.from({ length: 3000 }, (_, n) => n).filter((n) => n % 7 !== 3),
    );
    assert.equal(relay.backlog, 0);
  });

  it('keeps the order across the compaction of a long queue', () => {
    const { relay, relayed, completeAll } = recording(10_000);
    const entries = Array.from({ length: 5000 }, (_, n) => relay.add(n));
    // Settle the front in steps so that the front is dropped while later entries still wait.
    for (let i = 0; i < 3000; i++) relay.settle(entries[i]!, true);
    const more = Array.from({ length: 10 }, (_, n) => relay.add(5000 + n));
    for (let i = 3000; i < 5000; i++) relay.settle(entries[i]!, true);
    for (const entry of more) relay.settle(entry, true);
    completeAll();
    assert.deepEqual(
      relayed,
      Array.from({ length: 5010 }, (_, n) => n),
    );
    assert.equal(relay.backlog, 0);
  });
});
