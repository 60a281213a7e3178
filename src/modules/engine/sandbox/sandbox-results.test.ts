import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { refused, sandboxAs } from '../../../../test/helpers/sandbox.js';
import { DEFAULT_LIMITS, Sandbox } from './sandbox.js';
import { SEQUENCE_LIMIT, STRING_LIMIT } from './sandbox-limits.js';

/** `depth` arrays, one in the other, around 1 (a nesting JSON.stringify and structured clones overflow on). */
function nested(depth: number): unknown {
  let value: unknown = 1;
  for (let i = 0; i < depth; i++) value = [value];
  return value;
}

describe('Sandbox results and memory: measured where they are made', () => {
  // Time limits far above what these take: they are about memory, on a machine others share.
  const pool = new Sandbox({ ...DEFAULT_LIMITS, timeoutMs: 60_000 });
  const sandbox = sandboxAs(pool);
  after(() => pool.close());

  it('refuses a result past the limit as it writes it, naming the limit, and writes one within it', async () => {
    await refused(
      sandbox.jsonata('[1..200000]', null),
      'result_too_large',
      /^result too large: more than 1048576 bytes, limit 1048576$/,
    );
    await refused(
      sandbox.javascript('return Array.from({ length: 1e6 }, (_, i) => i)', null),
      'result_too_large',
      /^result too large: more than 1048576 bytes, limit 1048576$/,
    );
    // Fewer characters than the limit, more UTF-8 bytes: counted exactly.
    await refused(
      sandbox.javascript('return "é".repeat(600000)', null),
      'result_too_large',
      /^result too large: 1200002 bytes, limit 1048576$/,
    );
    const within = await sandbox.jsonata('[1..100000]', null);
    assert.equal((within.value as number[]).length, 100_000);
    assert.equal((await sandbox.jsonata('1 + 1', null)).value, 2);
  });

  it('refuses a sequence of 10^7 items and strings of 200 MB before they are made', async () => {
    await refused(
      sandbox.jsonata('[1..10000000]', null),
      'memory_exceeded',
      new RegExp(`^the expression made a sequence of more than ${SEQUENCE_LIMIT} items \\(the limit\\)$`),
    );
    await refused(
      sandbox.jsonata('$eval("[1..10000000]")', null),
      'memory_exceeded',
      /sequence of more than/,
    );
    await refused(
      sandbox.jsonata('$pad("", 200000000)', null),
      'memory_exceeded',
      new RegExp(
        `^the expression would make a string of 200000000 characters, more than the limit of ${STRING_LIMIT}$`,
      ),
    );
    // Doubling a string: each step ends as a longer string, until one is past the limit.
    await refused(
      sandbox.jsonata('($f := function($s) { $f($s & $s) }; $f("x"))', null),
      'memory_exceeded',
      /^the expression made a string of 2097152 characters, more than the limit of 1048576$/,
    );
    await refused(
      sandbox.jsonata('$join([1..200000].($ & "xxxxxxxxxx"))', null),
      'memory_exceeded',
      /would make a string of 3088895 characters/,
    );
    await refused(
      sandbox.jsonata('$string([1..200000])', null),
      'memory_exceeded',
      /^the expression would make a string longer than the limit of 1048576 characters$/,
    );
    // $pad with a pad of two characters made the whole padding, then cut it through an array of its
    // characters: one of 4 * 10^7 grew past the heap in one allocation, and V8 ended the process.
    await refused(
      sandbox.jsonata('$pad("", 20000000, "ab")', null),
      'memory_exceeded',
      /^the expression would make a string of 40000000 characters, more than the limit of 1048576$/,
    );
    await refused(
      sandbox.javascript('return "x".repeat(2e8)', null),
      'memory_exceeded',
      /^the code exceeded its memory limit of 32 MiB$/,
    );
    assert.equal((await sandbox.jsonata('$string([1, 2])', null)).value, '[1,2]');
    assert.equal((await sandbox.jsonata('$join(["a", "b"], "-")', null)).value, 'a-b');
    assert.equal((await sandbox.jsonata('$pad("7", -3, "0")', null)).value, '007');
    assert.equal((await sandbox.jsonata('1 + 1', null)).value, 2);
  });

  it('refuses results nested deeper than the depth limit, and cycles, with what is wrong', async () => {
    await refused(
      sandbox.javascript('let a = []; for (let i = 0; i < 1e5; i++) a = [a]; return a', null),
      'result_invalid',
      /^the result cannot be written as JSON: it nests deeper than 500 levels$/,
    );
    await refused(
      sandbox.jsonata('$', nested(1000)),
      'result_invalid',
      /^the result cannot be written as JSON: it nests deeper than 500 levels$/,
    );
    assert.deepEqual((await sandbox.jsonata('$', nested(499))).value, nested(499));
    await refused(
      sandbox.javascript('const a = { b: {} }; a.b.c = a; return a', null),
      'result_invalid',
      /^the result cannot be written as JSON: it contains a cycle \(a value that holds itself\)$/,
    );
    const cyclic: Record<string, unknown> = { v: 1 };
    cyclic.self = cyclic;
    await refused(sandbox.jsonata('$', cyclic), 'result_invalid', /contains a cycle/);
    assert.equal((await sandbox.jsonata('1 + 1', null)).value, 2);
  });

  it('refuses an input that cannot be sent to a thread, where it is submitted', async () => {
    await refused(
      sandbox.jsonata('$', nested(300_000)),
      'input_invalid',
      /^the input cannot be sent to the sandbox: Maximum call stack size exceeded$/,
    );
    assert.equal((await sandbox.jsonata('1 + 1', null)).value, 2);
  });

  it('reads log lines and thrown messages only up to their limit, whatever the code made', async () => {
    const logged = await sandbox.javascript(
      'const big = "y".repeat(3e6); const c = {}; c.c = c; console.log(big); console.log("a", c, [1]); return 1',
      null,
    );
    assert.equal(logged.logs[0], 'y'.repeat(2000));
    assert.equal(logged.logs[1], 'a [object Object] [1]');
    const thrown = await refused(
      sandbox.javascript('throw new Error("z".repeat(3e6))', null),
      'code_error',
      /^the code threw Error: z+$/,
    );
    assert.ok(thrown.message.length <= 2100, String(thrown.message.length));
    // JSONata writes the whole value into some messages: one of megabytes is named, not shown.
    await refused(
      sandbox.jsonata('{[1..200000].($pad("", 100, "x") & $): 1}', null),
      'expression_error',
      /^the expression failed: JSONata error T1003 \(its message, of \d+ characters, is too long to show\)$/,
    );
  });

  it('loads a new QuickJS module after a run that broke its own (a stack overflow inside WebAssembly)', async () => {
    // toJSON runs inside QuickJS's JSON.stringify, after the result's shape was checked.
    const broken = await refused(
      sandbox.javascript(
        'return { toJSON() { let a = 1; for (let i = 0; i < 1e5; i++) a = [a]; return a; } }',
        null,
      ),
      'depth_exceeded',
      /^the code or its result nests too deep for the sandbox \(stack overflow\)$/,
    );
    const next = await sandbox.javascript('return [1, 2].map((n) => n * 2)', null);
    assert.deepEqual(next.value, [2, 4]);
    assert.equal(next.thread, broken.thread);
  });
});
