import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { onOneThread, refused, sandboxAs } from '../../../../test/helpers/sandbox.js';
import { Sandbox } from './sandbox.js';

describe('Sandbox (JSONata and QuickJS in a worker thread)', () => {
  const pool = new Sandbox();
  const sandbox = sandboxAs(pool);
  after(() => pool.close());

  it('evaluates JSONata with bindings and JavaScript with $input, $trigger and console.log', async () => {
    assert.deepEqual((await sandbox.jsonata('a * $k', { a: 21 }, { k: 2 })).value, 42);
    const js = await sandbox.javascript(
      'console.log("seen", $input.a); return { b: $input.a + $trigger.t }',
      { a: 1 },
      { trigger: { t: 2 } },
    );
    assert.deepEqual(js.value, { b: 3 });
    assert.deepEqual(js.logs, ['seen 1']);
  });

  it('gives an expression the bindings it names, and all of them to one that builds names at run time ($eval)', async () => {
    const bindings = { trigger: { t: 2 }, node: { In: { data: 3 } }, attempt: 1 };
    assert.equal((await sandbox.jsonata('$trigger.t + $node.In.data', null, bindings)).value, 5);
    assert.equal((await sandbox.jsonata('$eval("$" & "trig" & "ger").t', null, bindings)).value, 2);
    assert.equal((await sandbox.jsonata('$exists($node) and $exists($attempt)', null, bindings)).value, true);
    // A name the expression does not use stays out; one it uses but nobody bound is undefined, as before.
    assert.equal((await sandbox.jsonata('$exists($nothing)', null, bindings)).value, false);
  });

  it('keeps the main thread answering while a script loops forever, and ends it at its time limit', async () => {
    let ticks = 0;
    const timer = setInterval(() => ticks++, 20);
    const started = Date.now();
    await refused(
      () => sandbox.javascript('while (true) {}', null, {}, { timeoutMs: 500 }),
      'timeout',
      /time limit of 500 ms/,
    );
    const took = Date.now() - started;
    clearInterval(timer);
    assert.ok(took < 2000, `took ${took} ms`);
    assert.ok(ticks >= 10, `the main thread's timer ran ${ticks} times`);
    // The sandbox still works afterwards.
    assert.equal((await sandbox.javascript('return 1 + 1', null)).value, 2);
  });

  it("ends runaway code at its time limit inside the thread, with the thread's own error, and that thread serves on", async () => {
    // The watchdog would end the script too, by terminating the thread, some time after the limit:
    // these are the thread's own limits (QuickJS's interrupt handler, JSONata's evaluation hook).
    await onOneThread(async (pool, one) => {
      const first = await one.javascript('return 1', null);
      const code = await refused(
        one.javascript('while (true) {}', null, {}, { timeoutMs: 300 }),
        'timeout',
        /^the code exceeded its time limit of 300 ms$/,
      );
      const expression = await refused(
        one.jsonata('$reduce([1..200000], function($sum, $v) { $sum + $v })', null, {}, { timeoutMs: 50 }),
        'timeout',
        /^the expression exceeded its time limit of 50 ms$/,
      );
      const next = await one.jsonata('1 + 1', null);
      assert.equal(next.value, 2);
      assert.deepEqual(
        [code.thread, expression.thread, next.thread],
        [first.thread, first.thread, first.thread],
      );
      assert.equal(pool.threadsStarted, 1);
    });
  });

  it('fails an evaluation that kills its thread, once: it is never sent to another thread, and those behind it run', async () => {
    await onOneThread(async (pool, one) => {
      const first = await one.jsonata('1', null);
      // Ranges of 2 MiB each, until the thread's heap is full: the thread dies, and Node says why.
      const killer = one.jsonata(
        '$map([1..100], function($v) { [1..262144] })',
        null,
        {},
        { timeoutMs: 60_000 },
      );
      const behind = [1, 2, 3].map((n) => one.jsonata('n * 10', { n }));
      const error = await refused(killer, 'memory_exceeded', /sandbox thread's memory of 128 MiB/);
      assert.equal(error.thread, first.thread);
      const answers = await Promise.all(behind);
      assert.deepEqual(
        answers.map((answer) => answer.value),
        [10, 20, 30],
      );
      assert.notEqual(answers[0]!.thread, first.thread);
      // One replacement: the killer was not sent to it (it would have killed that one too).
      assert.equal(pool.threadsStarted, 2);
    });
  });

  it('blames the evaluation whose thread dies while writing its result, and no other', async () => {
    // The thread counts an evaluation as ended only once its answer is written: a thread lost while
    // writing a result (here: a result limit raised far past the heap, the same 300 KB string a
    // thousand times) blames that evaluation. Counted as ended earlier, the evaluation went back to
    // the queue and killed the next thread, and the next (once: forever).
    await onOneThread(async (pool, one) => {
      const writer = one.jsonata(
        '($s := $pad("", 300000, "x"); [1..1000].$s)',
        null,
        {},
        {
          timeoutMs: 60_000,
          maxResultBytes: 512 * 1024 * 1024,
        },
      );
      const behind = one.jsonata('2 * 21', null);
      await refused(writer, 'memory_exceeded', /sandbox thread's memory of 128 MiB/);
      assert.equal((await behind).value, 42);
      assert.equal(pool.threadsStarted, 2);
    });
  });

  it('ends deep recursion, a catastrophic regular expression (QuickJS and JSONata) and a string bomb', async () => {
    await refused(
      () => sandbox.javascript('function f() { return f() + 1 } return f()', null),
      'depth_exceeded',
      /stack limit/,
    );
    await refused(
      () => sandbox.javascript('return /(a+)+$/.test("a".repeat(40) + "b")', null, {}, { timeoutMs: 500 }),
      'timeout',
      /time limit/,
    );
    // A native loop inside JSONata escapes the in-thread checks: the watchdog ends it (its own message).
    const started = Date.now();
    await refused(
      () =>
        sandbox.jsonata(
          '$match("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaab", /(a+)+$/)',
          null,
          {},
          { timeoutMs: 500 },
        ),
      'timeout',
      /^the evaluation exceeded its time limit of 500 ms$/,
    );
    const took = Date.now() - started;
    assert.ok(took < 2000, `took ${took} ms`);
    await refused(
      () => sandbox.jsonata('($f := function($n){ $n = 0 ? 0 : 1 + $f($n - 1) }; $f(100000))', null),
      'depth_exceeded',
      /depth limit/,
    );
    await refused(
      () => sandbox.javascript('let s = "x"; while (true) s += s;', null),
      'code_error',
      /string too long/,
    );
    await refused(
      () =>
        sandbox.javascript(
          'const a = []; while (true) a.push("x".repeat(100000) + a.length)',
          null,
          {},
          { timeoutMs: 500 },
        ),
      'timeout',
      /time limit/,
    );
    assert.equal((await sandbox.jsonata('1 + 1', null)).value, 2);
  });

  it('reaches neither process, require, the file system nor the network', async () => {
    const seen = await sandbox.javascript(
      'return [typeof process, typeof require, typeof fetch, typeof globalThis.std, typeof globalThis.os, typeof XMLHttpRequest]',
      null,
    );
    assert.deepEqual(seen.value, [
      'undefined',
      'undefined',
      'undefined',
      'undefined',
      'undefined',
      'undefined',
    ]);
    await refused(
      () => sandbox.javascript('return require("fs")', null),
      'code_error',
      /'require' is not defined/,
    );
    await refused(
      () => sandbox.javascript('return process.exit(1)', null),
      'code_error',
      /'process' is not defined/,
    );
    await refused(() => sandbox.jsonata('$eval("1")(1)', null), 'expression_error', /failed/);
  });

  it('sends data as JSON, and data JSON cannot hold (a cycle) as a clone, evaluating both alike', async () => {
    const data = { a: { b: [{ c: 1 }, { c: 'x', d: [true, null, 2.5] }] } };
    assert.deepEqual((await sandbox.jsonata('a.b[1]', data)).value, { c: 'x', d: [true, null, 2.5] });
    const cyclic: Record<string, unknown> = { v: 2 };
    cyclic.self = cyclic;
    assert.equal((await sandbox.jsonata('v * 21', cyclic)).value, 42);
    assert.equal((await sandbox.jsonata('self.self.v', cyclic)).value, 2);
    assert.equal((await sandbox.jsonata('$exists($)', undefined)).value, false);
  });

  it('keeps prototype pollution inside the run', async () => {
    const result = await sandbox.javascript(
      'Object.prototype.polluted = 1; return JSON.parse(\'{"__proto__": {"hacked": true}}\')',
      null,
    );
    assert.equal(({} as Record<string, unknown>).hacked, undefined);
    assert.equal(({} as Record<string, unknown>).polluted, undefined);
    assert.equal(Object.getPrototypeOf(result.value), Object.prototype);
    assert.deepEqual((await sandbox.javascript('return ({}).polluted === undefined', null)).value, true);
  });

  it('refuses an expression that does not compile, naming it', async () => {
    await refused(() => sandbox.jsonata('a +', null), 'expression_invalid', /does not compile/);
    await refused(() => sandbox.javascript('return (', null), 'code_error', /SyntaxError/);
  });

  it('sends evaluations ahead to a thread; those queued behind one that escapes its limit run on a new thread', async () => {
    await onOneThread(async (_pool, one) => {
      // A catastrophic regular expression inside JSONata is a native loop: only the watchdog ends it,
      // by terminating the thread, while the evaluations sent behind it wait in that thread. Those sent
      // before it ended, but their answers may still wait in the thread (answers go in batches): the
      // runaway alone fails, and the others get their answers all the same.
      const before = [1, 2, 3].map((n) => one.jsonata('n * 10', { n }));
      const runaway = one.jsonata(
        '$match("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaab", /(a+)+$/)',
        null,
        {},
        { timeoutMs: 300 },
      );
      const behind = [1, 2, 3, 4, 5].map((n) => one.jsonata('n * 10', { n }));
      await refused(() => runaway, 'timeout', /time limit of 300 ms/);
      assert.deepEqual(
        (await Promise.all([...before, ...behind])).map((r) => r.value),
        [10, 20, 30, 10, 20, 30, 40, 50],
      );
      // Many at once on one thread: every answer goes to its own evaluation.
      const many = await Promise.all(Array.from({ length: 200 }, (_, n) => one.jsonata('n + 1', { n })));
      assert.deepEqual(
        many.map((r) => r.value),
        Array.from({ length: 200 }, (_, n) => n + 1),
      );
    });
  });
});
