import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import { WORKER_ENTRIES } from '../scripts/bundle-options.mjs';
import { newProgress } from '../src/modules/engine/sandbox/sandbox-thread.js';
import { freePort } from './helpers/free-port.js';
import { TestClient } from './helpers/http-client.js';
import { REPO_ROOT } from './helpers/repo-root.js';

/** What `npm start` runs: bin/meridian.js with the bundled server, against a fresh embedded database. */
describe('the shipped build (bin/meridian.js and the bundle) [sqlite]', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'meridian-shipped-'));
  let url: string;
  let child: ReturnType<typeof spawn>;
  let output = '';

  before(async () => {
    execFileSync(process.execPath, ['scripts/bundle.mjs']);
    const port = await freePort();
    url = `http://127.0.0.1:${port}`;
    child = spawn(process.execPath, ['bin/meridian.js', 'serve'], {
      env: {
        PATH: process.env.PATH,
        MERIDIAN_DATA_DIR: dataDir,
        MERIDIAN_HTTP_HOST: '127.0.0.1',
        MERIDIAN_HTTP_PORT: String(port),
        MERIDIAN_MQTT_PORT: String(await freePort()),
        MERIDIAN_ADMIN_PASSWORD: 'shipped-build-password',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout?.on('data', (c: Buffer) => {
      output += c.toString();
    });
    child.stderr?.on('data', (c: Buffer) => {
      output += c.toString();
    });
    for (let i = 0; i < 600 && !/Meridian ready/.test(output); i++)
      await new Promise((r) => setTimeout(r, 50));
    assert.match(output, /Meridian ready in \d+ ms/, output);
  });
  after(async () => {
    child?.kill('SIGTERM');
    await new Promise((r) => child?.once('exit', r));
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('serves the API, the API reference and the console', async () => {
    assert.equal((await fetch(`${url}/readyz`)).status, 200);
    const docs = await fetch(`${url}/api/docs/static/index.html`);
    assert.equal(docs.status, 200);
    const page = await fetch(`${url}/`, { headers: { accept: 'text/html' } });
    assert.ok([200, 503].includes(page.status), 'the console, or the page that says to build it');
    assert.match(await page.text(), /<html/i);
  });

  it('signs in, issues a token and publishes a value', async () => {
    const admin = await new TestClient(url).login('admin@localhost', 'shipped-build-password');
    const orgId = (await admin.get('/api/v1/auth/session')).body.data.organizations[0].id;
    const client = await admin.inOrg(orgId).post('/api/v1/oauth2/clients', {
      name: 'Shipped',
      clientType: 'confidential',
      grantTypes: ['client_credentials'],
      allowedScopes: ['uns:publish'],
    });
    assert.equal(client.status, 201, client.text);
    const token = await fetch(`${url}/api/v1/oauth2/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'client_credentials',
        client_id: client.body.data.clientId,
        client_secret: client.body.data.clientSecret,
      }),
    });
    assert.equal(token.status, 200);
    const { access_token } = (await token.json()) as { access_token: string };
    const published = await new TestClient(url)
      .as({ token: access_token, org: orgId })
      .post('/api/v1/uns/data/publish', { topic: 'v1/shipped/line/value', value: 1 });
    assert.equal(published.status, 200, published.text);
  });

  it('starts every worker thread from its module beside the bundle', async () => {
    const BUNDLE = pathToFileURL(join(REPO_ROOT, 'dist', 'bundle', '/'));
    /** Starts `<name>.mjs` of the bundle as the server does (no inherited flags), and waits until it has answered `done` messages (or `done` says so). */
    const probe = async (
      name: string,
      workerData: unknown,
      send: unknown[],
      done: number | ((answers: unknown[]) => boolean),
    ) => {
      const worker = new Worker(new URL(`${name}.mjs`, BUNDLE), { execArgv: [], workerData });
      const answers: unknown[] = [];
      try {
        await new Promise<void>((resolve, reject) => {
          worker.on('message', (message) => {
            answers.push(message);
            if (typeof done === 'number' ? answers.length === done : done(answers)) resolve();
          });
          worker.once('error', reject);
          worker.once('exit', (code) => reject(new Error(`${name} exited (code ${code})`)));
          for (const message of send) worker.postMessage(message);
        });
      } finally {
        await worker.terminate();
      }
      return answers;
    };
    const names = Object.keys(WORKER_ENTRIES).sort();
    assert.deepEqual(names, [
      'audit.worker',
      'compaction.worker',
      'engine-bookkeeping.worker',
      'historian.worker',
      'sandbox.worker',
      'signing.worker',
      'wal-checkpoint.worker',
    ]);
    const file = join(dataDir, 'meridian.db');
    // The SQLite threads: the checkpoint thread serves a checkpoint of the server's database; the
    // others open it and say whether they could prepare their statements (given none here, they cannot:
    // an answer either way is their program running).
    const [ready, checkpoint] = await probe('wal-checkpoint.worker', { file, busyTimeoutMs: 1000 }, [{}], 2);
    assert.deepEqual(ready, { ready: true });
    assert.ok(Array.isArray((checkpoint as { answer: unknown }).answer), JSON.stringify(checkpoint));
    // The compaction thread opens both files and answers which topics have rows to compact.
    const historianFile = join(dataDir, 'uns-history.db');
    const [opened, series] = await probe(
      'compaction.worker',
      { dialect: 'sqlite', file, historianFile, busyTimeoutMs: 1000 },
      [{ op: 'series', beforeUs: 0 }],
      2,
    );
    assert.deepEqual(opened, { ready: true });
    assert.deepEqual(series, { answer: [] });
    for (const name of ['audit.worker', 'engine-bookkeeping.worker', 'historian.worker']) {
      const [first] = await probe(name, { file, busyTimeoutMs: 1000 }, [], 1);
      assert.ok(
        first && typeof first === 'object' && ('ready' in first || 'fatal' in first),
        `${name}: ${JSON.stringify(first)}`,
      );
    }
    // The signing thread signs; the sandbox thread evaluates JSONata and JavaScript in QuickJS.
    const { generateKeyPairSync } = await import('node:crypto');
    const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const [tokens] = await probe(
      'signing.worker',
      undefined,
      [
        { keyId: 0, key: privateKey },
        { headers: ['e30'], payloads: ['{}'], keyIds: [0] },
      ],
      1,
    );
    assert.match((tokens as string[])[0]!, /^e30\.e30\.[\w-]{86}$/);
    const limits = {
      timeoutMs: 1000,
      memoryBytes: 32 << 20,
      stackBytes: 512 << 10,
      maxDepth: 100,
      maxResultBytes: 1 << 20,
    };
    const progress = newProgress();
    const answers = await probe(
      'sandbox.worker',
      { progress: progress.buffer, sequenceLimit: 1000, stringLimit: 1000 },
      [
        [
          [1, JSON.stringify({ kind: 'jsonata', source: '$.a + 1', input: { a: 1 }, bindings: {} }), limits],
          [
            2,
            JSON.stringify({
              kind: 'javascript',
              source: 'return $input.a * 3',
              input: { a: 2 },
              bindings: {},
            }),
            limits,
          ],
        ],
      ],
      (answers) => (answers as unknown[][]).flat().length === 2,
    );
    const flat = (answers as unknown[][]).flat();
    assert.deepEqual(flat, [
      [1, 1, '2', []],
      [2, 1, '6', []],
    ]);
  });
});
