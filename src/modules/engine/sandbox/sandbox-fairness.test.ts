import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Worker } from 'node:worker_threads';
import { refused, sandboxAs } from '../../../../test/helpers/sandbox.js';
import { OrganizationQueues } from './organization-queues.js';
import { Sandbox } from './sandbox.js';
import { EXTRA_AFTER_MS, IN_FLIGHT_PER_THREAD, type Pending, ThreadShares } from './thread-shares.js';

/** Whether `promise` has settled, read without waiting for it. */
function settled(promise: Promise<unknown>): () => boolean {
  let done = false;
  promise.then(
    () => {
      done = true;
    },
    () => {
      done = true;
    },
  );
  return () => done;
}

const LOOP = 'while (true) {}';

describe('Sandbox fairness between organizations', () => {
  it("finishes another organization's evaluation while one organization's long evaluations hold every thread", async () => {
    const pool = new Sandbox(undefined, 2);
    const acme = sandboxAs(pool, 'acme');
    const globex = sandboxAs(pool, 'globex');
    try {
      // Three scripts that run until their (long) limit: two hold both threads, one waits behind them.
      const loops = [1, 2, 3].map(() => acme.javascript(LOOP, null, {}, { timeoutMs: 60_000 }));
      const loopsDone = loops.map(settled);
      // The pool gives them out on its next turn of the event loop: acme, alone, takes both threads.
      await new Promise((resolve) => setImmediate(resolve));
      await new Promise((resolve) => setImmediate(resolve));
      assert.equal(pool.threadsStarted, 2);
      const other = await globex.jsonata('1 + 1', null);
      assert.equal(other.value, 2);
      assert.deepEqual(
        loopsDone.map((done) => done()),
        [false, false, false],
        "globex's evaluation waited for acme's",
      );
      assert.equal(pool.threadsStarted, 3, 'an extra thread for globex');
    } finally {
      await pool.close();
    }
  });

  it('gives an organization alone every thread', async () => {
    const pool = new Sandbox(undefined, 2);
    const acme = sandboxAs(pool, 'acme');
    try {
      const ends = await Promise.all(
        [1, 2].map(() =>
          refused(acme.javascript(LOOP, null, {}, { timeoutMs: 300 }), 'timeout', /time limit/),
        ),
      );
      assert.notEqual(ends[0]!.thread, ends[1]!.thread, 'both ran at once, on two threads');
    } finally {
      await pool.close();
    }
  });
});

describe('Sandbox threads: who may send evaluations where', () => {
  /** A pool's bookkeeping with two threads started (a stand-in worker each), on a clock the test moves. */
  function shares() {
    let now = 0;
    const queue = new OrganizationQueues<Pending>(() => now);
    const threads = new ThreadShares(2, queue);
    for (const slot of threads.slots) slot.worker = {} as Worker;
    const pending = (organizationId: string) => ({ organizationId }) as Pending;
    /** Puts `n` evaluations of `organizationId` in flight on `slot` (as the pool's assign does). */
    const send = (slotIndex: number, organizationId: string, n = 1) => {
      const slot = threads.slots[slotIndex]!;
      if (slot.sent.length === 0) threads.hold(slot, organizationId);
      for (let i = 0; i < n; i++) slot.sent.push(pending(organizationId));
    };
    return { queue, threads, pending, send, tick: (ms: number) => (now += ms) };
  }

  it('lets an organization alone fill every thread up to the evaluations in flight a thread takes', () => {
    const { queue, threads, pending, send } = shares();
    queue.push(pending('acme'));
    send(0, 'acme');
    assert.equal(threads.slotFor('acme'), threads.slots[1], 'an idle thread first');
    send(1, 'acme', IN_FLIGHT_PER_THREAD);
    assert.equal(threads.slotFor('acme'), threads.slots[0], 'then the less busy of its own');
    send(0, 'acme', IN_FLIGHT_PER_THREAD - 1);
    assert.equal(threads.slotFor('acme'), undefined, 'both full: it waits');
  });

  it('keeps an organization past its share from adding to its threads while another waits, so they pass to it', () => {
    const { queue, threads, pending, send, tick } = shares();
    send(0, 'acme');
    send(1, 'acme');
    queue.push(pending('acme'));
    queue.push(pending('globex'));
    // Two organizations with work: a share of one thread each. Acme holds two, so it adds to neither.
    assert.equal(threads.slotFor('acme'), undefined);
    assert.equal(threads.slotFor('globex'), undefined, 'no idle thread, and it has not waited long');
    tick(EXTRA_AFTER_MS);
    const extra = threads.slotFor('globex');
    assert.ok(extra?.extra, 'an extra thread for the organization kept waiting');
    assert.equal(threads.slots.length, 3);
    // Acme's first thread drains: it goes to the organization below its share, not back to acme,
    // which, down to its share, may add to the thread it still holds.
    threads.slots[0]!.sent.length = 0;
    threads.release(threads.slots[0]!);
    assert.equal(threads.slotFor('acme'), threads.slots[1]);
    assert.equal(threads.slotFor('globex'), threads.slots[0]);
  });

  it('lets an organization within its share add to its own thread while another waits', () => {
    const { queue, threads, pending, send } = shares();
    send(0, 'acme');
    send(1, 'globex');
    queue.push(pending('acme'));
    queue.push(pending('globex'));
    assert.equal(threads.slotFor('acme'), threads.slots[0]);
    assert.equal(threads.slotFor('globex'), threads.slots[1]);
  });

  it('serves the organizations with work waiting in turn', () => {
    const queue = new OrganizationQueues<Pending>();
    for (const organizationId of ['acme', 'acme', 'acme', 'globex', 'initech'])
      queue.push({ organizationId } as Pending);
    const order: string[] = [];
    while (queue.size > 0) {
      const [first] = queue.turns();
      order.push(queue.take(first!)!.organizationId);
      queue.served(first!);
    }
    assert.deepEqual(order, ['acme', 'globex', 'initech', 'acme', 'acme']);
  });
});
