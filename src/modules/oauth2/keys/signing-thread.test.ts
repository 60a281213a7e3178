import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createSecretKey, generateKeyPairSync, randomBytes, verify } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { extname } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { compactVerify, exportJWK, importJWK } from 'jose';
import { createSigningThread, MAX_BATCH, SIGNING_THREAD_NICENESS } from './signing-thread.js';

const p256 = () => generateKeyPairSync('ec', { namedCurve: 'P-256' });
const HEADER = Buffer.from(JSON.stringify({ alg: 'ES256', typ: 'at+jwt', kid: 'k' })).toString('base64url');
/** True when `jws` is HEADER, the base64url of `payload`, and a signature of both by `publicKey`. */
const verifies = (payload: string, jws: string, publicKey: ReturnType<typeof p256>['publicKey']) => {
  const [header, body, signature] = jws.split('.');
  return (
    header === HEADER &&
    body === Buffer.from(payload).toString('base64url') &&
    verify(
      'sha256',
      Buffer.from(`${header}.${body}`),
      { key: publicKey, dsaEncoding: 'ieee-p1363' },
      Buffer.from(signature!, 'base64url'),
    )
  );
};

const SCHED_BATCH = 3;
/** Each thread of this process by id: its niceness and scheduling policy, as the scheduler sees them (Linux). */
const threadScheduling = () =>
  new Map(
    readdirSync('/proc/self/task').map((tid) => {
      const stat = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      // Fields 19 (nice) and 41 (policy) of proc_pid_stat(5); the list starts at field 3.
      return [tid, { nice: Number(fields[16]), policy: Number(fields[38]) }] as const;
    }),
  );
const hasChrt = spawnSync('chrt', ['--version']).status === 0;

describe('signing thread', () => {
  it('answers each payload with its own token, across batches, turns and keys', async () => {
    const thread = createSigningThread();
    const keys = [p256(), p256()];
    const inputs = Array.from({ length: MAX_BATCH * 5 + 3 }, (_, i) =>
      JSON.stringify({ n: i, nonce: randomBytes(8).toString('base64url') }),
    );
    const sign = (input: string, i: number) => thread.signJws(HEADER, input, keys[i % 2]!.privateKey);
    const first = inputs.slice(0, 20).map((input, i) => sign(input, i));
    await new Promise((resolve) => setImmediate(resolve));
    const rest = inputs.slice(20).map((input, i) => sign(input, i + 20));
    const signatures = await Promise.all([...first, ...rest]);
    signatures.forEach((signature, i) => {
      assert.equal(verifies(inputs[i]!, signature, keys[i % 2]!.publicKey), true, `input ${i}`);
      assert.equal(
        verifies(inputs[i]!, signature, keys[(i + 1) % 2]!.publicKey),
        false,
        `input ${i}, other key`,
      );
    });
  });

  it('makes a JWS that jose verifies (ES256, 64-byte P1363 signature, UTF-8 payload)', async () => {
    const { privateKey, publicKey } = p256();
    const jws = await createSigningThread().signJws(HEADER, JSON.stringify({ sub: 'u', n: 'ü' }), privateKey);
    assert.equal(Buffer.from(jws.split('.')[2]!, 'base64url').length, 64);
    const key = await importJWK({ ...(await exportJWK(publicKey)), alg: 'ES256' }, 'ES256');
    const verified = await compactVerify(jws, key, { algorithms: ['ES256'] });
    assert.deepEqual(verified.protectedHeader, { alg: 'ES256', typ: 'at+jwt', kid: 'k' });
    assert.deepEqual(JSON.parse(new TextDecoder().decode(verified.payload)), { sub: 'u', n: 'ü' });
  });

  it('rejects a signature the key cannot make, and keeps signing', async () => {
    const thread = createSigningThread();
    const { privateKey, publicKey } = p256();
    const bad = thread.signJws(HEADER, '{}', createSecretKey(randomBytes(32)));
    const good = thread.signJws(HEADER, '{}', privateKey);
    await assert.rejects(bad, /ES256 signing failed/);
    assert.equal(verifies('{}', await good, publicKey), true);
  });

  it('rejects what was in flight when the thread dies, then starts a new thread', async () => {
    const thread = createSigningThread({ name: 'test-workers/dying-signing', from: import.meta.url });
    const { privateKey, publicKey } = p256();
    const lost = [
      thread.signJws(HEADER, '"die"', privateKey),
      thread.signJws(HEADER, '"with it"', privateKey),
    ];
    for (const token of lost) await assert.rejects(token, /signing thread exited \(code 3\)/);
    // The new thread is sent the key again.
    assert.equal(verifies('"after"', await thread.signJws(HEADER, '"after"', privateKey), publicKey), true);
  });

  it('runs as a batch thread, which never preempts the event loop (Linux; else at niceness +5)', async (t) => {
    if (process.platform !== 'linux') return t.skip('thread scheduling is set on Linux only');
    const before = threadScheduling();
    const eventLoop = threadScheduling().get(String(process.pid))!;
    const { privateKey } = p256();
    await createSigningThread().signJws(HEADER, '{}', privateKey);
    // The policy is set asynchronously by chrt, once the thread has started.
    const expected = (s: { nice: number; policy: number }) =>
      hasChrt
        ? s.policy === SCHED_BATCH && s.nice === eventLoop.nice
        : s.nice === Math.min(19, eventLoop.nice + SIGNING_THREAD_NICENESS);
    let started: { nice: number; policy: number }[] = [];
    for (let i = 0; i < 100 && !started.some(expected); i++) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      started = [...threadScheduling()].filter(([tid]) => !before.has(tid)).map(([, s]) => s);
    }
    assert.ok(started.some(expected), `new threads: ${JSON.stringify(started)}`);
    assert.deepEqual(threadScheduling().get(String(process.pid)), eventLoop, 'the event loop keeps its own');
  });

  it('does not keep the process alive once nothing is in flight', () => {
    const module = fileURLToPath(new URL(`./signing-thread${extname(import.meta.url)}`, import.meta.url));
    const script = `
      import { generateKeyPairSync } from 'node:crypto';
      const { createSigningThread } = await import(${JSON.stringify(module)});
      const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
      const jws = await createSigningThread().signJws('e30', '{}', privateKey);
      console.log(jws.split('.')[2].length);`;
    const child = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
      timeout: 20_000,
      encoding: 'utf8',
    });
    assert.equal(child.signal, null, 'the process did not exit by itself');
    assert.equal(child.status, 0, child.stderr);
    assert.equal(child.stdout.trim(), '86');
  });
});
