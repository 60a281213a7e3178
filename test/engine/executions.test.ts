import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { testDialects } from '../helpers/dialects.js';
import type { TestClient } from '../helpers/http-client.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';
import { createPat } from '../uns/uns-helpers.js';
import {
  allNodeRuns,
  createValid,
  EXECUTIONS,
  execute,
  executionIn,
  manual,
  PIPELINES,
} from './engine-helpers.js';

const code = (id: string, source: string, settings?: Record<string, unknown>) => ({
  id,
  name: id,
  type: 'code.javascript',
  parameters: { code: source },
  ...(settings ? { settings } : {}),
});

for (const dialect of testDialects()) {
  describe(`Executions [${dialect}]`, () => {
    let server: TestServer;
    let api: TestClient;
    const runToEnd = async (id: string, input?: unknown) => executionIn(api, await execute(api, id, input));
    const update = async (id: string, change: (body: Record<string, unknown>) => void) => {
      const current = (await api.get(`${PIPELINES}/${id}`)).body.data;
      const body = {
        name: current.name,
        nodes: current.nodes,
        edges: current.edges,
        settings: current.settings,
        version: current.version,
      };
      change(body);
      const res = await api.put(`${PIPELINES}/${id}`, body);
      assert.equal(res.status, 200, res.text);
      return res.body.data.version as number;
    };

    before(async () => {
      server = await startTestServer(dialect);
      const token = await createPat(server.admin, ['pipelines:read', 'pipelines:write', 'uns:read']);
      api = server.client.as({ token, org: server.orgId });
    });
    after(() => server?.close());

    it('a node failing twice then succeeding with three tries completes; retry from the failed node does not re-run its upstream nodes', async () => {
      const flakyCode = 'if ($attempt < 3) throw new Error("try " + $attempt); return $input.value * 10';
      const id = await createValid(api, {
        name: 'Flaky after a publish',
        nodes: [
          manual,
          {
            id: 'up',
            name: 'Up',
            type: 'uns.publish',
            parameters: { topic: 'v1/retry/up', value: '{{ n }}' },
          },
          code('flaky', flakyCode, { retry: { maxTries: 3, waitMs: 20 } }),
        ],
        edges: [
          { source: 'start', target: 'up' },
          { source: 'up', target: 'flaky' },
        ],
      });
      const first = await runToEnd(id, { n: 1 });
      assert.equal(first.status, 'completed', JSON.stringify(first));
      const flaky = (await allNodeRuns(api, first.id)).find((r) => r.nodeId === 'flaky')!;
      assert.deepEqual(
        flaky.attempts.map((a) => [a.n, a.error]),
        [
          [1, 'the code threw Error: try 1'],
          [2, 'the code threw Error: try 2'],
          [3, null],
        ],
      );
      // With two tries it fails; fixed (three tries again) on the current version, the retry starts at it.
      await update(id, (body) => {
        (body.nodes as { settings: unknown }[])[2]!.settings = { retry: { maxTries: 2 } };
      });
      const failed = await runToEnd(id, { n: 2 });
      assert.equal(failed.status, 'failed');
      assert.deepEqual(failed.error, {
        nodeId: 'flaky',
        nodeName: 'flaky',
        code: 'code_error',
        message: 'the code threw Error: try 2',
      });
      const fixedVersion = await update(id, (body) => {
        (body.nodes as { settings: unknown }[])[2]!.settings = { retry: { maxTries: 3 } };
      });
      const retry = await api.post(`${EXECUTIONS}/${failed.id}/retry`, {
        mode: 'from-failed',
        version: 'current',
      });
      assert.equal(retry.status, 201, retry.text);
      assert.equal(retry.body.data.pipelineVersion, fixedVersion);
      assert.equal(retry.body.data.trigger.type, 'retry');
      const retried = await executionIn(api, retry.body.data.id);
      assert.equal(retried.status, 'completed', JSON.stringify(retried));
      const runs = await allNodeRuns(api, retried.id);
      assert.deepEqual(
        runs.map((r) => r.nodeId),
        ['flaky'],
        'only the failed node ran',
      );
      assert.equal(runs[0]!.attempts.length, 3);
      const published = await api.get('/api/v1/uns/data/history?topic=v1/retry/up');
      assert.deepEqual(
        published.body.data.map((v: { value: unknown }) => v.value),
        [1, 2],
        'the upstream publish did not run again',
      );
      // On the original version (two tries) it fails again; a second retry needs again: true.
      assert.equal((await api.post(`${EXECUTIONS}/${failed.id}/retry`, {})).status, 409);
      const again = await api.post(`${EXECUTIONS}/${failed.id}/retry`, { again: true, version: 'original' });
      assert.equal(again.status, 201, again.text);
      const original = await executionIn(api, again.body.data.id);
      assert.equal(original.status, 'failed');
      assert.equal(original.pipelineVersion, failed.pipelineVersion);
    });

    it('retry settings: fixed and exponential waits between tries; the timeout ends each try', async () => {
      const id = await createValid(api, {
        name: 'Always failing',
        nodes: [
          manual,
          code('fixed', 'throw new Error("no")', { retry: { maxTries: 3, waitMs: 150, backoff: 'fixed' } }),
          code('exp', 'throw new Error("no")', {
            retry: { maxTries: 3, waitMs: 150, backoff: 'exponential' },
          }),
          code('slow', 'while (true) {}', { timeoutSeconds: 1, retry: { maxTries: 2 } }),
        ],
        edges: ['fixed', 'exp', 'slow'].map((target) => ({ source: 'start', target })),
        settings: { defaults: { onError: 'continue' } },
      });
      const done = await runToEnd(id);
      assert.equal(done.status, 'completed_with_errors', JSON.stringify(done));
      const runs = await allNodeRuns(api, done.id);
      const gaps = (nodeId: string) => {
        const a = runs.find((r) => r.nodeId === nodeId)!.attempts;
        return a
          .slice(1)
          .map((x, i) => Date.parse(x.startedAt) - Date.parse(a[i]!.startedAt) - a[i]!.durationMs);
      };
      const [f1, f2] = gaps('fixed');
      assert.ok(f1! >= 148 && f2! >= 148, `fixed gaps ${f1}, ${f2}`);
      const [e1, e2] = gaps('exp');
      assert.ok(e1! >= 148 && e2! >= 298, `exponential gaps ${e1}, ${e2}`);
      const slow = runs.find((r) => r.nodeId === 'slow')!;
      assert.equal(slow.attempts.length, 2);
      for (const a of slow.attempts) assert.match(a.error!, /time limit of 1000 ms/);
      assert.equal(slow.error!.code, 'timeout');
    });

    it('on error: stop fails the execution, continue passes the input on, errorPort sends the error on its port', async () => {
      const pipeline = (name: string, settings?: Record<string, unknown>) =>
        createValid(api, {
          name,
          settings: { historyDetail: 'full' },
          nodes: [
            manual,
            code('bad', 'throw new Error("broken sensor")', settings),
            { id: 'next', name: 'Next', type: 'transform.jsonata', parameters: { expression: '$' } },
            { id: 'handler', name: 'Handler', type: 'transform.jsonata', parameters: { expression: '$' } },
          ],
          edges: [
            { source: 'start', target: 'bad' },
            { source: 'bad', target: 'next' },
            { source: 'bad', sourcePort: 'error', target: 'handler' },
          ],
        });
      const ran = async (id: string) => {
        const done = await runToEnd(id, { v: 7 });
        return { done, runs: await allNodeRuns(api, done.id) };
      };
      const stop = await ran(await pipeline('On error stop'));
      assert.equal(stop.done.status, 'failed');
      assert.equal(stop.done.reason, 'node_error');
      // Which nodes ran (the order of runs started in one millisecond is not defined by the list).
      assert.deepEqual(stop.runs.map((r) => r.nodeId).sort(), ['bad', 'start']);
      const cont = await ran(await pipeline('On error continue', { onError: 'continue' }));
      assert.equal(cont.done.status, 'completed_with_errors');
      assert.deepEqual(cont.runs.find((r) => r.nodeId === 'next')!.output, { v: 7 });
      assert.equal(cont.runs.find((r) => r.nodeId === 'bad')!.status, 'failed');
      assert.equal(
        cont.runs.some((r) => r.nodeId === 'handler'),
        false,
      );
      const port = await ran(await pipeline('On error port', { onError: 'errorPort' }));
      assert.equal(port.done.status, 'completed_with_errors');
      assert.deepEqual(port.runs.find((r) => r.nodeId === 'handler')!.output, {
        error: { code: 'code_error', message: 'the code threw Error: broken sensor' },
        input: { v: 7 },
      });
      assert.equal(
        port.runs.some((r) => r.nodeId === 'next'),
        false,
      );
    });

    it('a run with debug keeps every node output at the default history detail; the same run without it keeps none', async () => {
      const id = await createValid(api, {
        name: 'Debug run',
        nodes: [
          manual,
          { id: 'calc', name: 'Calc', type: 'transform.jsonata', parameters: { expression: 'v * 6' } },
        ],
        edges: [{ source: 'start', target: 'calc' }],
      });
      const pipeline = (await api.get(`${PIPELINES}/${id}`)).body.data;
      assert.equal(pipeline.settings.historyDetail, 'standard');
      const debugged = await api.post(`${PIPELINES}/${id}/execute`, { input: { v: 7 }, debug: true });
      assert.equal(debugged.status, 202, debugged.text);
      assert.equal(debugged.body.data.trigger.source.debug, true, 'the trigger says it was a debug run');
      const debugRun = await executionIn(api, debugged.body.data.id);
      assert.equal(debugRun.status, 'completed');
      const debugRuns = await allNodeRuns(api, debugRun.id);
      assert.equal(debugRuns.find((r) => r.nodeId === 'calc')!.output, 42);
      assert.deepEqual(debugRuns.find((r) => r.nodeId === 'start')!.output, { v: 7 });

      const plain = await runToEnd(id, { v: 7 });
      const plainRuns = await allNodeRuns(api, plain.id);
      assert.equal(
        plainRuns.find((r) => r.nodeId === 'calc')!.output,
        null,
        'standard detail keeps no output',
      );

      const refused = await api.post(`${PIPELINES}/${id}/execute`, { debug: 'yes' });
      assert.equal(refused.status, 400, refused.text);
      assert.equal(refused.body.error, 'bad_request');
    });

    it('lists node runs in the order they ran, also those started in the same millisecond', async () => {
      // Node ids in reverse alphabetical order along the chain: neither the id nor the run's own id
      // (random) can give the order; fast nodes start within one millisecond.
      const chain = ['f', 'e', 'd', 'c', 'b', 'a'];
      const id = await createValid(api, {
        name: 'Ordered runs',
        settings: { historyDetail: 'full' },
        nodes: [
          manual,
          ...chain.map((n) => ({
            id: n,
            name: n,
            type: 'transform.set',
            parameters: { fields: { [n]: 1 } },
          })),
        ],
        edges: ['start', ...chain].slice(0, -1).map((source, i) => ({ source, target: chain[i]! })),
      });
      for (let round = 0; round < 3; round++) {
        const execution = await runToEnd(id, {});
        assert.equal(execution.status, 'completed');
        const runs = await allNodeRuns(api, execution.id as string);
        assert.deepEqual(
          runs.map((r) => r.nodeId),
          ['start', ...chain],
        );
      }
    });

    it('lists executions by pipeline, status, trigger and time, paged; statistics; node runs paged', async () => {
      const id = await createValid(api, {
        name: 'Listed',
        nodes: [manual, code('check', 'if ($input.bad) throw new Error("bad"); return 1')],
        edges: [{ source: 'start', target: 'check' }],
      });
      const t0 = Date.now();
      const ok1 = await runToEnd(id, {});
      const bad = await runToEnd(id, { bad: true });
      const ok2 = await runToEnd(id, {});
      const retry = await api.post(`${EXECUTIONS}/${bad.id}/retry`, { mode: 'from-start', input: {} });
      const retried = await executionIn(api, retry.body.data.id);
      const list = async (query: string) => {
        const res = await api.get(`${EXECUTIONS}?pipelineId=${id}&${query}`);
        assert.equal(res.status, 200, res.text);
        return res.body;
      };
      assert.equal((await list('')).pagination.total, 4);
      assert.deepEqual(
        (await list('status=failed')).data.map((e: { id: string }) => e.id),
        [bad.id],
      );
      assert.deepEqual(
        (await list('trigger=retry')).data.map((e: { id: string }) => e.id),
        [retried.id],
      );
      assert.equal((await list('trigger=manual')).pagination.total, 3);
      const page = await list('limit=2&offset=1');
      assert.deepEqual(
        page.data.map((e: { id: string }) => e.id),
        [ok2.id, bad.id],
      );
      const window = await list(
        `from=${new Date(Date.parse(ok1.queuedAt as string) + 1).toISOString()}&to=${encodeURIComponent(
          new Date(Date.parse(ok2.queuedAt as string)).toISOString(),
        )}`,
      );
      assert.deepEqual(
        window.data.map((e: { id: string }) => e.id),
        [bad.id],
        'from is inclusive, to exclusive',
      );
      assert.equal((await list(`from=${new Date(t0 + 3_600_000).toISOString()}`)).pagination.total, 0);
      assert.equal((await api.get(`${EXECUTIONS}?from=yesterday`)).status, 400);
      assert.equal((await api.get(`${EXECUTIONS}?status=sleeping`)).status, 400);
      const stats = await api.get(`${EXECUTIONS}/stats?pipelineId=${id}`);
      assert.equal(stats.status, 200, stats.text);
      assert.equal(stats.body.data.total, 4);
      assert.equal(stats.body.data.byStatus.completed, 3);
      assert.equal(stats.body.data.byStatus.failed, 1);
      assert.equal(stats.body.data.successRate, 0.75);
      assert.ok(stats.body.data.durationMs.max >= stats.body.data.durationMs.average);
      assert.equal((await api.get(`${EXECUTIONS}/stats?status=failed`)).status, 400);
      const nodes = await api.get(`${EXECUTIONS}/${ok1.id}/nodes?limit=1&offset=1`);
      assert.equal(nodes.status, 200, nodes.text);
      assert.equal(nodes.body.pagination.total, 2);
      assert.deepEqual(
        nodes.body.data.map((r: { nodeId: string }) => r.nodeId),
        ['check'],
      );
      const only = await api.get(`${EXECUTIONS}/${ok1.id}/nodes?nodeId=start`);
      assert.deepEqual(
        only.body.data.map((r: { nodeId: string }) => r.nodeId),
        ['start'],
      );
    });
  });
}
