import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createSecretKey, generateKeyPairSync, randomBytes, verify } from 'node:crypto';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { compactVerify, exportJWK, importJWK } from 'jose';
import { createSigningThread, MAX_BATCH, SIGNING_THREAD_SOURCE } from './signing-thread.js';

const p256 = () => generateKeyPairSync('ec', { namedCurve: 'P-256' });
const verifies = (input: string, signature: string, publicKey: ReturnType<typeof p256>['publicKey']) =>
  verify(
    'sha256',
    Buffer.from(input),
    { key: publicKey, dsaEncoding: 'ieee-p1363' },
    Buffer.from(signature, 'base64url'),
  );

describe('signing thread', () => {
  it('answers each input with its own signature, across batches, turns and keys', async () => {
    const thread = createSigningThread();
    const keys = [p256(), p256()];
    const inputs = Array.from(
      { length: MAX_BATCH * 5 + 3 },
      (_, i) => `input-${i}.${randomBytes(8).toString('base64url')}`,
    );
    const first = inputs.slice(0, 20).map((input, i) => thread.sign(input, keys[i % 2]!.privateKey));
    await new Promise((resolve) => setImmediate(resolve));
    const rest = inputs.slice(20).map((input, i) => thread.sign(input, keys[(i + 20) % 2]!.privateKey));
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

  it('makes a JWS that jose verifies (ES256, 64-byte P1363 signature)', async () => {
    const { privateKey, publicKey } = p256();
    const header = Buffer.from(JSON.stringify({ alg: 'ES256', typ: 'at+jwt', kid: 'k' })).toString(
      'base64url',
    );
    const payload = Buffer.from(JSON.stringify({ sub: 'u', n: 'ü' })).toString('base64url');
    const input = `${header}.${payload}`;
    const signature = await createSigningThread().sign(input, privateKey);
    assert.equal(Buffer.from(signature, 'base64url').length, 64);
    const key = await importJWK({ ...(await exportJWK(publicKey)), alg: 'ES256' }, 'ES256');
    const verified = await compactVerify(`${input}.${signature}`, key, { algorithms: ['ES256'] });
    assert.deepEqual(JSON.parse(new TextDecoder().decode(verified.payload)), { sub: 'u', n: 'ü' });
  });

  it('rejects a signature the key cannot make, and keeps signing', async () => {
    const thread = createSigningThread();
    const { privateKey, publicKey } = p256();
    const bad = thread.sign('input', createSecretKey(randomBytes(32)));
    const good = thread.sign('input', privateKey);
    await assert.rejects(bad, /ES256 signing failed/);
    assert.equal(verifies('input', await good, publicKey), true);
  });

  it('rejects what was in flight when the thread dies, then starts a new thread', async () => {
    const dying = `require('node:worker_threads').parentPort.on('message', (m) => {
      if (m.inputs && m.inputs.includes('die')) process.exit(3);
    });\n${SIGNING_THREAD_SOURCE}`;
    const thread = createSigningThread(dying);
    const { privateKey, publicKey } = p256();
    const lost = [thread.sign('die', privateKey), thread.sign('with it', privateKey)];
    for (const signature of lost) await assert.rejects(signature, /signing thread exited \(code 3\)/);
    // The new thread is sent the key again.
    assert.equal(verifies('after', await thread.sign('after', privateKey), publicKey), true);
  });

  it('does not keep the process alive once nothing is in flight', () => {
    const module = fileURLToPath(new URL('./signing-thread.ts', import.meta.url));
    const script = `
      import { generateKeyPairSync } from 'node:crypto';
      const { createSigningThread } = await import(${JSON.stringify(module)});
      const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
      const signature = await createSigningThread().sign('input', privateKey);
      console.log(signature.length);`;
    const child = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
      timeout: 20_000,
      encoding: 'utf8',
    });
    assert.equal(child.signal, null, 'the process did not exit by itself');
    assert.equal(child.status, 0, child.stderr);
    assert.equal(child.stdout.trim(), '86');
  });
});
