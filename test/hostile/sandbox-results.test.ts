import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { SERVER_NODE_FLAGS } from '../../src/platform/gc-tuning.js';
import { createTestDatabase, type TestDatabase, testDialects } from '../helpers/dialects.js';
import { freePort } from '../helpers/free-port.js';
import { TestClient } from '../helpers/http-client.js';
import { type MeridianProcess, runMeridian, serveEnv } from '../helpers/process.js';
import { waitUntil } from '../helpers/wait.js';
import { createPat } from '../uns/uns-helpers.js';

const ADMIN_EMAIL = 'admin@sandbox.test';
const ADMIN_PASSWORD = 'sandbox-admin-password';

/** `depth` arrays, one in the other, around 1. */
const nested = (depth: number) => `${'['.repeat(depth)}1${']'.repeat(depth)}`;

/**
 * Evaluations that once aborted the whole process (a 10^7-item sequence: JSON.stringify of it went past
 * the sandbox thread's heap, and V8 aborts the process there) or could: results of 10^7 items, strings of
 * 200 MB, nesting 100,000 deep, a cycle. Each is a node test answered 200 with the node's error, and the
 * same in a pipeline a UNS value triggers, which is recorded failed with that error.
 */
const HOSTILE: { name: string; node: Record<string, unknown>; code: string; message: RegExp }[] = [
  {
    name: 'a sequence of 10^7 items',
    node: { type: 'transform.jsonata', parameters: { expression: '[1..10000000]' } },
    code: 'memory_exceeded',
    message: /^the expression made a sequence of more than 262144 items \(the limit\)$/,
  },
  {
    name: 'a result past the result limit',
    node: { type: 'transform.jsonata', parameters: { expression: '[1..200000]' } },
    code: 'result_too_large',
    message: /^result too large: more than 1048576 bytes, limit 1048576$/,
  },
  {
    name: 'an array of 10^7 items in JavaScript',
    node: {
      type: 'code.javascript',
      parameters: { code: 'return Array.from({ length: 1e7 }, (_, i) => i)' },
    },
    code: 'memory_exceeded',
    message: /^the code exceeded its memory limit of 32 MiB$/,
  },
  {
    name: 'a string of 200 MB',
    node: { type: 'transform.jsonata', parameters: { expression: '$pad("", 200000000)' } },
    code: 'memory_exceeded',
    message: /^the expression would make a string of 200000000 characters, more than the limit of 1048576$/,
  },
  {
    name: 'a string of 200 MB in JavaScript',
    node: { type: 'code.javascript', parameters: { code: 'return "x".repeat(2e8)' } },
    code: 'memory_exceeded',
    message: /^the code exceeded its memory limit of 32 MiB$/,
  },
  {
    name: 'nesting 100,000 deep',
    node: {
      type: 'code.javascript',
      parameters: { code: 'let a = 1; for (let i = 0; i < 1e5; i++) a = [a]; return a' },
    },
    code: 'result_invalid',
    message: /^the result cannot be written as JSON: it nests deeper than 500 levels$/,
  },
  {
    name: 'a cycle',
    node: { type: 'code.javascript', parameters: { code: 'const a = { b: {} }; a.b.a = a; return a' } },
    code: 'result_invalid',
    message: /^the result cannot be written as JSON: it contains a cycle \(a value that holds itself\)$/,
  },
];

for (const dialect of testDialects()) {
  describe(`Sandbox: no evaluation ends the server [${dialect}]`, () => {
    let database: TestDatabase;
    let meridian: MeridianProcess;
    let url: string;
    let api: TestClient;
    /** /healthz, asked every 50 ms from the start to the end of the suite. */
    const health = { asked: 0, failures: [] as string[], stop: false, done: Promise.resolve() };

    const nodeTest = async (node: Record<string, unknown>, input?: unknown) => {
      const res = await api.post(
        '/api/v1/engine/nodes/test',
        input === undefined ? { node } : { node, input },
      );
      assert.equal(res.status, 200, res.text);
      return res.body.data as { output: unknown; error: { code: string; message: string } | null };
    };
    const onePlusOne = async () => {
      const result = await nodeTest({ type: 'transform.jsonata', parameters: { expression: '1 + 1' } });
      assert.equal(result.output, 2, JSON.stringify(result));
    };

    before(async () => {
      database = await createTestDatabase(dialect);
      const port = await freePort();
      // As the server runs in production: its own process, with its Node flags (the semi-space flag
      // once took a sandbox thread past its limit where V8 aborts the process).
      meridian = runMeridian(['serve'], {
        ...serveEnv(database, port, { email: ADMIN_EMAIL, password: ADMIN_PASSWORD }),
        NODE_OPTIONS: SERVER_NODE_FLAGS.join(' '),
      });
      await meridian.waitFor(/Meridian ready/, 60_000);
      url = `http://127.0.0.1:${port}`;
      const orgId = /organization id: +(\S+)/.exec(meridian.output())?.[1];
      assert.ok(orgId, 'the first start prints the organization id');
      const session = await new TestClient(url).login(ADMIN_EMAIL, ADMIN_PASSWORD, orgId);
      const token = await createPat(session, [
        'pipelines:read',
        'pipelines:write',
        'uns:read',
        'uns:publish',
      ]);
      api = new TestClient(url).as({ token, org: orgId });
      health.done = (async () => {
        while (!health.stop) {
          health.asked++;
          try {
            const res = await fetch(`${url}/healthz`, { signal: AbortSignal.timeout(10_000) });
            if (res.status !== 200) health.failures.push(`/healthz answered ${res.status}`);
          } catch (error) {
            health.failures.push(`/healthz: ${(error as Error).message}`);
          }
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
      })();
    });
    after(async () => {
      health.stop = true;
      await health.done;
      if (meridian?.child.exitCode === null) meridian.child.kill('SIGKILL');
      await meridian?.exited;
      await database?.drop();
    });

    it('answers each hostile node test with its error, and 1 + 1 right after', {
      timeout: 300_000,
    }, async () => {
      const askedBefore = health.asked;
      for (const hostile of HOSTILE) {
        const result = await nodeTest(hostile.node);
        assert.equal(result.error?.code, hostile.code, `${hostile.name}: ${JSON.stringify(result.error)}`);
        assert.match(result.error!.message, hostile.message, hostile.name);
        await onePlusOne();
      }
      // Nesting the HTTP body carries: one the sandbox refuses to write, one no thread can be sent.
      const deep = await nodeTest(
        { type: 'transform.jsonata', parameters: { expression: '$' } },
        JSON.parse(nested(1000)),
      );
      assert.equal(deep.error?.code, 'result_invalid', JSON.stringify(deep.error));
      const deeper = await api.request('POST', '/api/v1/engine/nodes/test', {
        raw: `{"node":{"type":"transform.jsonata","parameters":{"expression":"$"}},"input":${nested(300_000)}}`,
        headers: { 'content-type': 'application/json' },
      });
      assert.equal(deeper.status, 200, deeper.text.slice(0, 500));
      assert.equal(deeper.body.data.error.code, 'input_invalid', JSON.stringify(deeper.body.data.error));
      await onePlusOne();
      assert.equal(meridian.child.exitCode, null, 'the server is running');
      assert.deepEqual(health.failures, []);
      assert.ok(health.asked > askedBefore, '/healthz was asked while the evaluations ran');
    });

    it('records a UNS-triggered pipeline running each failed with its error, and runs a sound one after', {
      timeout: 300_000,
    }, async () => {
      const askedBefore = health.asked;
      const listening = async (name: string, node: Record<string, unknown>, topic: string) => {
        const res = await api.post('/api/v1/engine/pipelines', {
          name,
          enabled: true,
          nodes: [
            { id: 'in', name: 'In', type: 'trigger.uns', parameters: { filter: topic } },
            { id: 'work', name: 'Work', ...node },
          ],
          edges: [{ source: 'in', target: 'work' }],
        });
        assert.equal(res.status, 201, res.text);
        return res.body.data.id as string;
      };
      const finished = (pipelineId: string) =>
        waitUntil(
          `an execution of ${pipelineId} finished`,
          async () => {
            const res = await api.get(`/api/v1/engine/executions?pipelineId=${pipelineId}`);
            assert.equal(res.status, 200, res.text);
            const [execution] = res.body.data;
            return execution && !['queued', 'running'].includes(execution.status) ? execution : null;
          },
          120_000,
        );
      const pipelines = await Promise.all(
        HOSTILE.map((hostile, i) => listening(`Hostile ${i}`, hostile.node, `v1/hostile/line${i}/value`)),
      );
      for (const [i] of HOSTILE.entries()) {
        const res = await api.post('/api/v1/uns/data/publish', {
          topic: `v1/hostile/line${i}/value`,
          value: i,
        });
        assert.equal(res.status, 200, res.text);
      }
      for (const [i, hostile] of HOSTILE.entries()) {
        const execution = await finished(pipelines[i]!);
        assert.equal(execution.status, 'failed', `${hostile.name}: ${JSON.stringify(execution)}`);
        assert.equal(execution.error.code, hostile.code, hostile.name);
        assert.match(execution.error.message, hostile.message, hostile.name);
        assert.equal(execution.error.nodeId, 'work');
      }
      const sound = await listening(
        'Sound',
        { type: 'transform.jsonata', parameters: { expression: 'value + 1' } },
        'v1/hostile/sound/value',
      );
      await api.post('/api/v1/uns/data/publish', { topic: 'v1/hostile/sound/value', value: 41 });
      assert.equal((await finished(sound)).status, 'completed');
      await onePlusOne();
      assert.equal(meridian.child.exitCode, null, 'the server is running');
      assert.deepEqual(health.failures, []);
      assert.ok(health.asked > askedBefore, '/healthz was asked while the pipelines ran');
    });
  });
}
