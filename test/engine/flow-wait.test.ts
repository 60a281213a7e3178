import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { testDialects } from '../helpers/dialects.js';
import type { TestClient } from '../helpers/http-client.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';
import { createPat } from '../uns/uns-helpers.js';
import { allNodeRuns, createValid, EXECUTIONS, execute, executionIn, manual } from './engine-helpers.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

for (const dialect of testDialects()) {
  describe(`Wait node [${dialect}]`, () => {
    let server: TestServer;
    let api: TestClient;

    before(async () => {
      server = await startTestServer(dialect);
      const token = await createPat(server.admin, ['pipelines:read', 'pipelines:write', 'uns:read']);
      api = server.client.as({ token, org: server.orgId });
    });
    after(() => server?.close());

    /** start → stamp (publishes a time to `<topic>/a`) → wait → echo (publishes the stamp to `<topic>/b`). */
    const stampWaitEcho = (name: string, topic: string, wait: Record<string, unknown>, settings = {}) =>
      createValid(api, {
        name,
        settings: { historyDetail: 'standard', ...settings },
        nodes: [
          manual,
          {
            id: 'stamp',
            name: 'Stamp',
            type: 'uns.publish',
            parameters: { topic: `${topic}/a`, value: '{{ $millis() }}' },
          },
          { id: 'wait', name: 'Wait', type: 'flow.wait', parameters: wait },
          {
            id: 'echo',
            name: 'Echo',
            type: 'uns.publish',
            parameters: { topic: `${topic}/b`, value: '{{ $node.Stamp.data.value }}' },
          },
        ],
        edges: [
          { source: 'start', target: 'stamp' },
          { source: 'stamp', target: 'wait' },
          { source: 'wait', target: 'echo' },
        ],
      });
    const history = async (topic: string) => {
      const res = await api.get(`/api/v1/uns/data/history?topic=${encodeURIComponent(topic)}`);
      assert.equal(res.status, 200, res.text);
      return (res.body.data as { value: unknown }[]).map((v) => v.value);
    };

    it('sleeps in place for a short wait', async () => {
      const id = await stampWaitEcho('Short wait', 'v1/wait/short', { seconds: 0.3 });
      const done = await executionIn(api, await execute(api, id));
      assert.equal(done.status, 'completed', JSON.stringify(done));
      assert.ok((done.durationMs as number) >= 300, `${done.durationMs} ms`);
      assert.equal(done.claims, 1);
      assert.deepEqual(await history('v1/wait/short/b'), await history('v1/wait/short/a'));
    });

    it('parks a long wait in the database (status waiting, no worker held) and resumes without re-running what ran', async () => {
      const id = await stampWaitEcho('Long wait', 'v1/wait/long', { seconds: '{{ 1 + 1 }}' });
      const executionId = await execute(api, id);
      const waiting = await executionIn(api, executionId, ['waiting']);
      assert.ok(waiting.resumeAt, JSON.stringify(waiting));
      const row = await server.storage.db
        .selectFrom('engine_executions')
        .select(['locked_by', 'lease_until', 'checkpoint'])
        .where('id', '=', executionId)
        .executeTakeFirstOrThrow();
      assert.equal(row.lease_until, null, 'no lease is held while waiting');
      assert.ok(row.checkpoint, 'what ran is kept');
      const runs = await allNodeRuns(api, executionId);
      assert.equal(runs.find((r) => r.nodeId === 'wait')?.status, 'waiting');
      assert.equal(
        runs.some((r) => r.nodeId === 'echo'),
        false,
      );
      const done = await executionIn(api, executionId);
      assert.equal(done.status, 'completed', JSON.stringify(done));
      assert.equal(done.claims, 2);
      assert.equal(done.resumeAt, null);
      const after = await allNodeRuns(api, executionId);
      assert.deepEqual(
        after.map((r) => [r.nodeId, r.status]),
        [
          ['start', 'succeeded'],
          ['stamp', 'succeeded'],
          ['wait', 'succeeded'],
          ['echo', 'succeeded'],
        ],
      );
      assert.ok(after.find((r) => r.nodeId === 'wait')!.durationMs! >= 2000);
      const stamps = await history('v1/wait/long/a');
      assert.equal(stamps.length, 1, 'the node before the wait ran once');
      assert.deepEqual(
        await history('v1/wait/long/b'),
        stamps,
        "the node after the wait saw the first run's output",
      );
    });

    it('resumes a wait after the engine was down past its time (the state is in the database)', async () => {
      const id = await stampWaitEcho('Wait over a restart', 'v1/wait/restart', {
        until: '{{ $fromMillis($millis() + 1500) }}',
      });
      const executionId = await execute(api, id);
      await executionIn(api, executionId, ['waiting']);
      await server.app.engine.stop();
      try {
        await sleep(2500);
        assert.equal((await api.get(`${EXECUTIONS}/${executionId}`)).body.data.status, 'waiting');
      } finally {
        server.app.engine.start();
      }
      const done = await executionIn(api, executionId);
      assert.equal(done.status, 'completed', JSON.stringify(done));
      assert.equal((await history('v1/wait/restart/a')).length, 1);
      assert.deepEqual(await history('v1/wait/restart/b'), await history('v1/wait/restart/a'));
    });

    it('a time in the past continues at once; waiting does not count toward the execution time limit', async () => {
      const past = await stampWaitEcho('Wait past', 'v1/wait/past', { until: '2020-01-01T00:00:00Z' });
      const done = await executionIn(api, await execute(api, past));
      assert.equal(done.status, 'completed');
      assert.equal(done.claims, 1, 'never parked');
      const limited = await stampWaitEcho(
        'Wait longer than the limit',
        'v1/wait/limit',
        { seconds: 2.5 },
        {
          timeoutSeconds: 2,
        },
      );
      const waited = await executionIn(api, await execute(api, limited));
      assert.equal(waited.status, 'completed', JSON.stringify(waited));
    });

    it('parks inside a loop body once per element and replays the loop, merge and switch when it resumes', async () => {
      const id = await createValid(api, {
        name: 'Wait in a loop',
        settings: { historyDetail: 'standard' },
        nodes: [
          manual,
          { id: 'each', name: 'Each', type: 'flow.for-each', parameters: {} },
          {
            id: 'sw',
            name: 'Switch',
            type: 'flow.switch',
            parameters: { rules: [{ operator: 'gt', compare: 1 }] },
          },
          { id: 'wait', name: 'Wait', type: 'flow.wait', parameters: { seconds: 1.2 } },
          { id: 'small', name: 'Small', type: 'transform.jsonata', parameters: { expression: '$ * 100' } },
          { id: 'big', name: 'Big', type: 'transform.jsonata', parameters: { expression: '$ * 10' } },
          { id: 'join', name: 'Join', type: 'flow.merge', parameters: { wait: 'first' } },
          {
            id: 'pub',
            name: 'Publish',
            type: 'uns.publish',
            parameters: { topic: 'v1/wait/loop/sum', value: '{{ $sum($) }}' },
          },
        ],
        edges: [
          { source: 'start', target: 'each' },
          { source: 'each', sourcePort: 'item', target: 'sw' },
          { source: 'sw', sourcePort: 'case_0', target: 'wait' },
          { source: 'sw', sourcePort: 'default', target: 'small' },
          { source: 'wait', target: 'big' },
          { source: 'big', target: 'join' },
          { source: 'small', target: 'join' },
          { source: 'each', sourcePort: 'done', target: 'pub' },
        ],
      });
      const done = await executionIn(api, await execute(api, id, [1, 2, 3]), undefined, 30_000);
      assert.equal(done.status, 'completed', JSON.stringify(done));
      assert.equal(done.claims, 3, 'parked once per element that waited');
      assert.deepEqual(await history('v1/wait/loop/sum'), [100 + 20 + 30]);
      const runs = await allNodeRuns(api, done.id);
      assert.deepEqual(
        runs.filter((r) => r.nodeId === 'wait').map((r) => [r.iteration, r.status]),
        [
          [1, 'succeeded'],
          [2, 'succeeded'],
        ],
      );
      assert.equal(runs.filter((r) => r.nodeId === 'sw').length, 3, 'the switch ran once per element');
      assert.equal(runs.filter((r) => r.nodeId === 'each').length, 1);
    });

    it('cancels a waiting execution: it never resumes, and a waiting one cannot be deleted', async () => {
      const id = await stampWaitEcho('Cancelled wait', 'v1/wait/cancel', { seconds: 1.5 });
      const executionId = await execute(api, id);
      await executionIn(api, executionId, ['waiting']);
      assert.equal((await api.delete(`${EXECUTIONS}/${executionId}`)).status, 409);
      const cancelled = await api.post(`${EXECUTIONS}/${executionId}/cancel`);
      assert.equal(cancelled.status, 202, cancelled.text);
      assert.equal(cancelled.body.data.status, 'cancelled');
      await sleep(2500);
      const after = (await api.get(`${EXECUTIONS}/${executionId}`)).body.data;
      assert.equal(after.status, 'cancelled');
      assert.equal(after.reason, 'user');
      assert.equal(
        (await allNodeRuns(api, executionId)).some((r) => r.nodeId === 'echo'),
        false,
      );
      const bad = await api.post(`${EXECUTIONS}/${executionId}/cancel`);
      assert.equal(bad.status, 409);
    });
  });
}
