import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { PipelineRow } from '../../src/modules/engine/pipelines/pipelines.repository.js';
import { ExecutionsRepository } from '../../src/modules/engine/queue/executions.repository.js';
import { ScheduleTriggers } from '../../src/modules/engine/triggers/schedule-triggers.js';
import { testDialects } from '../helpers/dialects.js';
import type { TestClient } from '../helpers/http-client.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';
import { waitUntil } from '../helpers/wait.js';
import { createPat } from '../uns/uns-helpers.js';

const PIPELINES = '/api/v1/engine/pipelines';
const EXECUTIONS = '/api/v1/engine/executions';

const manual = { id: 'start', name: 'Start', type: 'trigger.manual' };

/** Waits until the execution has finished; answers it. */
async function finished(api: TestClient, id: string, timeoutMs = 20_000) {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const res = await api.get(`${EXECUTIONS}/${id}`);
    assert.equal(res.status, 200, res.text);
    if (!['queued', 'running'].includes(res.body.data.status)) return res.body.data;
    if (Date.now() > until) assert.fail(`execution ${id} still ${res.body.data.status}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

for (const dialect of testDialects()) {
  describe(`Pipelines and executions [${dialect}]`, () => {
    let server: TestServer;
    let api: TestClient;
    let readOnly: TestClient;

    const create = (body: unknown) => api.post(PIPELINES, body);
    const run = async (id: string, input?: unknown) => {
      const res = await api.post(`${PIPELINES}/${id}/execute`, input === undefined ? {} : { input });
      assert.equal(res.status, 202, res.text);
      assert.equal(res.body.data.status, 'queued');
      return finished(api, res.body.data.id);
    };
    const nodeRuns = async (executionId: string) => {
      const res = await api.get(`${EXECUTIONS}/${executionId}/nodes`);
      assert.equal(res.status, 200, res.text);
      return res.body.data as {
        nodeId: string;
        status: string;
        port: string;
        output: unknown;
        input: unknown;
        attempts: { n: number; error: string | null }[];
        error: { code: string; message: string } | null;
      }[];
    };

    before(async () => {
      server = await startTestServer(dialect);
      const token = await createPat(server.admin, ['pipelines:read', 'pipelines:write', 'uns:read']);
      api = server.client.as({ token, org: server.orgId });
      readOnly = server.client.as({
        token: await createPat(server.admin, ['pipelines:read']),
        org: server.orgId,
      });
    });
    after(() => server?.close());

    it('lists node types with a JSON Schema, ports and side effect', async () => {
      const res = await readOnly.get('/api/v1/engine/nodes');
      assert.equal(res.status, 200, res.text);
      const types = new Map(res.body.data.map((t: { type: string }) => [t.type, t]));
      for (const type of [
        'trigger.manual',
        'flow.condition',
        'flow.stop-error',
        'transform.set',
        'transform.jsonata',
        'code.javascript',
        'uns.publish',
      ])
        assert.ok(types.has(type), type);
      const condition = types.get('flow.condition') as {
        parameters: { required: string[] };
        outputs: string[];
        sideEffect: string;
      };
      assert.deepEqual(condition.parameters.required, ['expression']);
      assert.deepEqual(condition.outputs, ['true', 'false', 'error']);
      assert.equal((types.get('uns.publish') as { sideEffect: string }).sideEffect, 'external');
      // The console edits these parameters as code: JSONata expressions and JavaScript bodies.
      const editors = (t: string) =>
        types.get(t) as { expressionParameters: string[]; codeParameters: string[] };
      assert.deepEqual(editors('transform.jsonata').expressionParameters, ['expression']);
      assert.deepEqual(editors('code.javascript').codeParameters, ['code']);
      assert.deepEqual(editors('trigger.manual').codeParameters, []);
      assert.equal((await readOnly.get('/api/v1/engine/nodes/nope')).status, 404);
      assert.equal((await readOnly.post(PIPELINES, { name: 'Nope' })).status, 403);
    });

    it('tests one node with supplied input without storing anything', async () => {
      const count = async () =>
        Number(
          (
            await server.storage.db
              .selectFrom('engine_executions')
              .select((eb) => eb.fn.countAll().as('n'))
              .executeTakeFirst()
          )?.n ?? 0,
        );
      const before = await count();
      const test = (body: unknown) => api.post('/api/v1/engine/nodes/test', body);
      const condition = await test({
        node: { type: 'flow.condition', parameters: { expression: 'temperature > $node.Limit.data' } },
        input: { temperature: 80 },
        nodes: { Limit: 70 },
      });
      assert.equal(condition.status, 200, condition.text);
      assert.equal(condition.body.data.port, 'true');
      assert.deepEqual(condition.body.data.output, { temperature: 80 });
      const js = await test({
        node: { type: 'code.javascript', parameters: { code: 'console.log("x"); return $trigger.a' } },
        trigger: { a: 5 },
      });
      assert.equal(js.body.data.output, 5);
      assert.deepEqual(js.body.data.logs, ['x']);
      const failing = await test({
        node: { type: 'code.javascript', parameters: { code: 'return missing.value' } },
      });
      assert.equal(failing.status, 200, failing.text);
      assert.equal(failing.body.data.error.code, 'code_error');
      assert.match(failing.body.data.error.message, /missing/);
      const bad = await test({ node: { type: 'transform.jsonata', parameters: { expression: '(' } } });
      assert.equal(bad.status, 400, bad.text);
      assert.equal(bad.body.path, '/node/parameters/expression');
      const unknown = await test({ node: { type: 'no.such' } });
      assert.equal(unknown.status, 400);
      assert.equal(unknown.body.path, '/node/type');
      const timeout = await test({
        node: { type: 'transform.set', parameters: { fields: {} }, settings: { timeoutSeconds: 0 } },
      });
      assert.equal(timeout.status, 400, timeout.text);
      const unconfirmed = await test({
        node: { type: 'uns.publish', parameters: { topic: 'v1/pipelines/test' } },
        input: 1,
      });
      assert.equal(unconfirmed.status, 400, unconfirmed.text);
      assert.equal(unconfirmed.body.path, '/confirmWrites');
      assert.equal(
        (await api.get('/api/v1/uns/data/latest?topic=v1/pipelines/test')).status,
        404,
        'nothing was published',
      );
      const confirmed = await test({
        node: { type: 'uns.publish', parameters: { topic: 'v1/pipelines/test' } },
        input: 7,
        confirmWrites: true,
      });
      assert.equal(confirmed.status, 200, confirmed.text);
      assert.equal((await api.get('/api/v1/uns/data/latest?topic=v1/pipelines/test')).body.data.value, 7);
      assert.equal(
        (await readOnly.post('/api/v1/engine/nodes/test', { node: { type: 'trigger.manual' } })).status,
        403,
      );
      assert.equal(await count(), before);
    });

    it('saves an invalid graph but refuses to enable it, listing every problem with its node', async () => {
      const res = await create({
        name: 'Broken',
        nodes: [
          manual,
          { id: 'a', name: 'A', type: 'transform.jsonata', parameters: { expression: 'x +' } },
          { id: 'b', name: 'B', type: 'transform.jsonata', parameters: { expression: '$' } },
          { id: 'c', name: 'C', type: 'no.such.type' },
          { id: 'd', name: 'D', type: 'flow.condition', parameters: { expresion: 'true' } },
        ],
        edges: [
          { source: 'start', target: 'a' },
          { source: 'a', target: 'b' },
          { source: 'b', target: 'a' },
          { source: 'start', target: 'ghost' },
          { source: 'start', sourcePort: 'nowhere', target: 'd' },
        ],
      });
      assert.equal(res.status, 201, res.text);
      assert.equal(res.body.data.enabled, false);
      assert.ok(res.body.data.problems.length >= 6);
      const enable = await api.post(`${PIPELINES}/${res.body.data.id}/enable`);
      assert.equal(enable.status, 400, enable.text);
      assert.equal(enable.body.error, 'bad_request');
      const problems = enable.body.problems as { nodeId: string; path: string; message: string }[];
      const has = (nodeId: string, path: string, message: RegExp) =>
        assert.ok(
          problems.some((p) => p.nodeId === nodeId && p.path === path && message.test(p.message)),
          `${nodeId} ${path} ${message} in ${JSON.stringify(problems)}`,
        );
      has('a', '/nodes/1/parameters/expression', /does not compile/);
      has('c', '/nodes/3/type', /not a known node type/);
      has('d', '/nodes/4/parameters/expression', /required/);
      has('d', '/nodes/4/parameters/expresion', /not a known parameter/);
      has('ghost', '/edges/3/target', /names no node/);
      has('start', '/edges/4/sourcePort', /no output port "nowhere"/);
      has('a', '/edges', /cycle/);
      has('b', '/edges', /cycle/);
      const stored = await api.get(`${PIPELINES}/${res.body.data.id}`);
      assert.equal(stored.body.data.enabled, false);
      assert.equal(stored.body.data.version, 1);
      const noTrigger = await create({ name: 'No trigger', enabled: true, nodes: [] });
      assert.equal(noTrigger.status, 400);
      assert.ok(
        noTrigger.body.problems.some(
          (p: { path: string; message: string }) => p.path === '/nodes' && /no trigger/.test(p.message),
        ),
      );
    });

    it('refuses bad input naming the JSON pointer, and stores nothing', async () => {
      const before = (await api.get(PIPELINES)).body.pagination.total;
      const cases: [unknown, string][] = [
        [{ name: 'ab' }, '/name'],
        [
          { name: 'Bad node', nodes: [{ ...manual, settings: { timeoutSeconds: 0 } }] },
          '/nodes/0/settings/timeoutSeconds',
        ],
        [
          { name: 'Bad node', nodes: [manual, { id: 'x y', name: 'X', type: 'transform.set' }] },
          '/nodes/1/id',
        ],
        [
          { name: 'Bad retry', nodes: [{ ...manual, settings: { retry: { maxTries: 11 } } }] },
          '/nodes/0/settings/retry/maxTries',
        ],
        [{ name: 'Bad mode', settings: { concurrency: { mode: 'later' } } }, '/settings/concurrency/mode'],
        [{ name: 'Bad history', settings: { historyDetail: 'all' } }, '/settings/historyDetail'],
        [{ name: 'Bad edge', edges: [{ source: 'a' }] }, '/edges/0/target'],
        [{ name: 'Extra', colour: 'red' }, '/colour'],
        [{ name: 'Labels', labels: ['a'] }, '/labels'],
      ];
      for (const [body, path] of cases) {
        const res = await create(body);
        assert.equal(res.status, 400, `${JSON.stringify(body)}: ${res.text}`);
        assert.equal(res.body.path, path, res.text);
        assert.ok(res.body.message.startsWith(path), res.body.message);
      }
      assert.equal((await api.get(PIPELINES)).body.pagination.total, before);
    });

    it('writes no version for a save that changes nothing, members in any order; a reordering is a change', async () => {
      const jsonata = { id: 'j', name: 'J', type: 'transform.jsonata', parameters: { expression: '$' } };
      const content = {
        name: 'Unchanged',
        labels: { cell: '7' },
        settings: { historyDetail: 'full' },
        nodes: [manual, jsonata],
        edges: [{ source: 'start', target: 'j' }],
      };
      const made = await create(content);
      assert.equal(made.status, 201, made.text);
      const { id, updatedAt } = made.body.data;
      // The same content again, its members and its nodes' members in another order.
      const same = await api.put(`${PIPELINES}/${id}`, {
        version: 1,
        edges: content.edges,
        nodes: [manual, { parameters: { expression: '$' }, type: 'transform.jsonata', name: 'J', id: 'j' }],
        settings: content.settings,
        labels: content.labels,
        name: content.name,
      });
      assert.equal(same.status, 200, same.text);
      assert.equal(same.body.data.version, 1);
      assert.equal(same.body.data.updatedAt, updatedAt);
      // Reverting to the version it is at, and a node update that sets what is there, change nothing either.
      assert.equal((await api.post(`${PIPELINES}/${id}/versions/1/revert`)).body.data.version, 1);
      const patched = await api.patch(`${PIPELINES}/${id}/nodes/j`, {
        version: 1,
        parameters: { expression: '$' },
      });
      assert.equal(patched.status, 200, patched.text);
      assert.equal(patched.body.data.version, 1);
      let versions = await api.get(`${PIPELINES}/${id}/versions`);
      assert.deepEqual(
        versions.body.data.map((v: { version: number }) => v.version),
        [1],
      );
      // Still checked against the version it was based on.
      assert.equal((await api.put(`${PIPELINES}/${id}`, { ...content, version: 2 })).status, 409);
      // The nodes in another order are another pipeline version (the editor lists them in that order).
      const reordered = await api.put(`${PIPELINES}/${id}`, {
        ...content,
        nodes: [jsonata, manual],
        version: 1,
      });
      assert.equal(reordered.status, 200, reordered.text);
      assert.equal(reordered.body.data.version, 2);
      versions = await api.get(`${PIPELINES}/${id}/versions`);
      assert.deepEqual(
        versions.body.data.map((v: { version: number }) => v.version),
        [2, 1],
      );
    });

    it('versions every change: stale update 409, diff, revert; clone is disabled under a new name', async () => {
      const made = await create({ name: 'Versioned', labels: { line: '1' }, nodes: [manual] });
      assert.equal(made.status, 201, made.text);
      const id = made.body.data.id;
      const put = await api.put(`${PIPELINES}/${id}`, {
        name: 'Versioned',
        labels: { line: '1' },
        nodes: [manual, { id: 'j', name: 'J', type: 'transform.jsonata', parameters: { expression: '$' } }],
        edges: [{ source: 'start', target: 'j' }],
        version: 1,
      });
      assert.equal(put.status, 200, put.text);
      assert.equal(put.body.data.version, 2);
      const stale = await api.put(`${PIPELINES}/${id}`, { name: 'Versioned', nodes: [], version: 1 });
      assert.equal(stale.status, 409, stale.text);
      assert.equal(stale.body.currentVersion, 2);
      assert.equal((await api.get(`${PIPELINES}/${id}`)).body.data.nodes.length, 2);
      const enabled = await api.post(`${PIPELINES}/${id}/enable`);
      assert.equal(enabled.status, 200, enabled.text);
      assert.equal(enabled.body.data.enabled, true);
      assert.equal(enabled.body.data.version, 3);
      // An enabled pipeline keeps a valid graph.
      const breaking = await api.put(`${PIPELINES}/${id}`, {
        name: 'Versioned',
        enabled: true,
        nodes: [{ id: 'j', name: 'J', type: 'transform.jsonata', parameters: { expression: '$' } }],
        version: 3,
      });
      assert.equal(breaking.status, 400, breaking.text);
      assert.ok(breaking.body.problems.length > 0);
      const versions = await api.get(`${PIPELINES}/${id}/versions`);
      assert.equal(versions.status, 200, versions.text);
      assert.deepEqual(
        versions.body.data.map((v: { version: number }) => v.version),
        [3, 2, 1],
      );
      const diff = await api.get(`${PIPELINES}/${id}/versions/2/diff?against=1`);
      assert.equal(diff.status, 200, diff.text);
      assert.ok(JSON.stringify(diff.body).includes('/nodes/1'), diff.text);
      const reverted = await api.post(`${PIPELINES}/${id}/versions/1/revert`);
      assert.equal(reverted.status, 200, reverted.text);
      assert.equal(reverted.body.data.version, 4);
      assert.equal(reverted.body.data.nodes.length, 1);
      assert.equal(reverted.body.data.enabled, false);
      const clone = await api.post(`${PIPELINES}/${id}/clone`, {});
      assert.equal(clone.status, 201, clone.text);
      assert.equal(clone.body.data.name, 'Versioned (copy)');
      assert.equal(clone.body.data.enabled, false);
      assert.equal(clone.body.data.version, 1);
      assert.notEqual(clone.body.data.id, id);
      assert.equal((await api.post(`${PIPELINES}/${id}/clone`, {})).body.data.name, 'Versioned (copy 2)');
      assert.equal((await api.post(`${PIPELINES}/${id}/clone`, { name: 'Versioned' })).status, 409);
      // The clones keep the labels.
      const listed = await api.get(`${PIPELINES}?label=line=1`);
      assert.equal(listed.body.data.length, 3);
      assert.equal((await api.get(`${PIPELINES}?label=line=2`)).body.data.length, 0);
      assert.equal((await api.get(`${PIPELINES}?label=line`)).body.data.length, 3);
      assert.equal((await api.delete(`${PIPELINES}/${id}`)).status, 204);
      assert.equal((await api.get(`${PIPELINES}/${id}`)).status, 404);
      assert.equal((await api.get(`${PIPELINES}/${id}/versions`)).status, 404);
    });

    it('runs a graph: JSONata, condition branches, set fields, JavaScript, UNS publish; node runs kept in full', async () => {
      const made = await create({
        name: 'Scale and publish',
        settings: { historyDetail: 'full' },
        nodes: [
          manual,
          {
            id: 'scale',
            name: 'Scale',
            type: 'transform.jsonata',
            parameters: { expression: '{ "celsius": raw / 10 }' },
          },
          { id: 'hot', name: 'Hot?', type: 'flow.condition', parameters: { expression: 'celsius > 50' } },
          {
            id: 'mark',
            name: 'Mark',
            type: 'transform.set',
            parameters: { fields: { alarm: true, from: '{{ $node.Scale.data.celsius }}' } },
          },
          {
            id: 'js',
            name: 'Code',
            type: 'code.javascript',
            parameters: { code: 'return { ...$input, f: $input.celsius * 9 / 5 + 32 }' },
          },
          {
            id: 'pub',
            name: 'Publish',
            type: 'uns.publish',
            parameters: {
              topic: 'v1/pipelines/{{ "oven" }}'.replace('{{ "oven" }}', 'oven'),
              value: '{{ f }}',
            },
          },
        ],
        edges: [
          { source: 'start', target: 'scale' },
          { source: 'scale', target: 'hot' },
          { source: 'hot', sourcePort: 'true', target: 'mark' },
          { source: 'hot', sourcePort: 'false', target: 'js' },
          { source: 'js', target: 'pub' },
        ],
      });
      assert.equal(made.status, 201, made.text);
      assert.deepEqual(made.body.data.problems, []);
      const id = made.body.data.id;
      const hot = await run(id, { raw: 900 });
      assert.equal(hot.status, 'completed', JSON.stringify(hot));
      assert.equal(hot.pipelineVersion, 1);
      const hotRuns = await nodeRuns(hot.id);
      assert.deepEqual(
        hotRuns.map((r) => r.nodeId),
        ['start', 'scale', 'hot', 'mark'],
      );
      assert.deepEqual(hotRuns[3]!.output, { celsius: 90, alarm: true, from: 90 });
      assert.equal(hotRuns[2]!.port, 'true');
      assert.deepEqual(hotRuns[1]!.input, { raw: 900 });
      const cold = await run(id, { raw: 200 });
      assert.equal(cold.status, 'completed', JSON.stringify(cold));
      const coldRuns = await nodeRuns(cold.id);
      assert.deepEqual(
        coldRuns.map((r) => r.nodeId),
        ['start', 'scale', 'hot', 'js', 'pub'],
      );
      assert.deepEqual(coldRuns[3]!.output, { celsius: 20, f: 68 });
      const latest = await api.get('/api/v1/uns/data/latest?topic=v1/pipelines/oven');
      assert.equal(latest.status, 200, latest.text);
      assert.equal(latest.body.data.value, 68);
      const listed = await api.get(`${EXECUTIONS}?pipelineId=${id}`);
      assert.equal(listed.body.pagination.total, 2);
      assert.equal(listed.body.data[0].id, cold.id, 'newest first');
      assert.equal((await api.get(`${EXECUTIONS}?pipelineId=${id}&status=failed`)).body.pagination.total, 0);
    });

    it('retries a node: failing twice then succeeding with three tries completes, with three attempts', async () => {
      const made = await create({
        name: 'Flaky',
        nodes: [
          manual,
          {
            id: 'flaky',
            name: 'Flaky',
            type: 'code.javascript',
            parameters: { code: 'if ($attempt < 3) throw new Error("not yet " + $attempt); return $attempt' },
            settings: { retry: { maxTries: 3, waitMs: 20, backoff: 'exponential' } },
          },
        ],
        edges: [{ source: 'start', target: 'flaky' }],
      });
      const done = await run(made.body.data.id);
      assert.equal(done.status, 'completed', JSON.stringify(done));
      const [, flaky] = await nodeRuns(done.id);
      assert.equal(flaky!.status, 'succeeded');
      assert.deepEqual(
        flaky!.attempts.map((a) => a.n),
        [1, 2, 3],
      );
      assert.match(flaky!.attempts[0]!.error!, /not yet 1/);
      assert.equal(flaky!.attempts[2]!.error, null);
      // Two tries are not enough: the execution fails naming the node; the failed run keeps its input.
      const two = await api.put(`${PIPELINES}/${made.body.data.id}`, {
        ...made.body.data,
        problems: undefined,
        id: undefined,
        createdAt: undefined,
        createdBy: undefined,
        updatedAt: undefined,
        updatedBy: undefined,
        nodes: [manual, { ...made.body.data.nodes[1], settings: { retry: { maxTries: 2 } } }],
      });
      assert.equal(two.status, 200, two.text);
      const failed = await run(made.body.data.id, { n: 1 });
      assert.equal(failed.status, 'failed');
      assert.equal(failed.reason, 'node_error');
      assert.equal(failed.error.nodeId, 'flaky');
      assert.match(failed.error.message, /not yet 2/);
      const failedRun = (await nodeRuns(failed.id))[1]!;
      assert.equal(failedRun.attempts.length, 2);
      assert.deepEqual(failedRun.input, { n: 1 });
    });

    it('retries from the failed node without re-running upstream nodes, or from the start on the current version', async () => {
      const made = await create({
        name: 'Retry me',
        nodes: [
          manual,
          { id: 'up', name: 'Up', type: 'transform.jsonata', parameters: { expression: '$' } },
          {
            id: 'check',
            name: 'Check',
            type: 'code.javascript',
            parameters: { code: 'if (!$input.fixed) throw new Error("not fixed"); return "ok"' },
          },
        ],
        edges: [
          { source: 'start', target: 'up' },
          { source: 'up', target: 'check' },
        ],
      });
      const id = made.body.data.id;
      const failed = await run(id, { fixed: false });
      assert.equal(failed.status, 'failed');
      const completedOne = await run(id, { fixed: true });
      const notRetryable = await api.post(`${EXECUTIONS}/${completedOne.id}/retry`, {});
      assert.equal(notRetryable.status, 409, notRetryable.text);
      const badMode = await api.post(`${EXECUTIONS}/${failed.id}/retry`, { mode: 'sideways' });
      assert.equal(badMode.status, 400, badMode.text);

      const retry = await api.post(`${EXECUTIONS}/${failed.id}/retry`, {
        mode: 'from-failed',
        input: { fixed: true },
      });
      assert.equal(retry.status, 201, retry.text);
      assert.equal(retry.body.data.retryOf, failed.id);
      assert.equal(retry.body.data.pipelineVersion, 1);
      const retried = await finished(api, retry.body.data.id);
      assert.equal(retried.status, 'completed', JSON.stringify(retried));
      assert.deepEqual(
        (await nodeRuns(retried.id)).map((r) => r.nodeId),
        ['check'],
        'upstream nodes did not run again',
      );
      const twice = await api.post(`${EXECUTIONS}/${failed.id}/retry`, {});
      assert.equal(twice.status, 409, twice.text);
      assert.match(twice.body.message, /already retried/);

      // Fix the pipeline, then retry from the start on the current version.
      const current = (await api.get(`${PIPELINES}/${id}`)).body.data;
      const fixed = await api.put(`${PIPELINES}/${id}`, {
        name: current.name,
        nodes: [manual, current.nodes[1], { ...current.nodes[2], parameters: { code: 'return "fixed"' } }],
        edges: current.edges,
        version: current.version,
      });
      assert.equal(fixed.status, 200, fixed.text);
      const again = await api.post(`${EXECUTIONS}/${failed.id}/retry`, {
        mode: 'from-start',
        version: 'current',
        again: true,
      });
      assert.equal(again.status, 201, again.text);
      assert.equal(again.body.data.pipelineVersion, 2);
      const done = await finished(api, again.body.data.id);
      assert.equal(done.status, 'completed');
      assert.deepEqual(
        (await nodeRuns(done.id)).map((r) => r.nodeId),
        ['start', 'up', 'check'],
      );

      // Cancel a queued execution; a finished one cannot be cancelled; delete a finished one.
      await server.app.engine.stop();
      let queuedId: string;
      try {
        queuedId = (await api.post(`${PIPELINES}/${id}/execute`, {})).body.data.id;
        const cancelled = await api.post(`${EXECUTIONS}/${queuedId}/cancel`);
        assert.equal(cancelled.status, 202, cancelled.text);
        assert.equal(cancelled.body.data.status, 'cancelled');
      } finally {
        server.app.engine.start();
      }
      assert.equal((await api.post(`${EXECUTIONS}/${done.id}/cancel`)).status, 409);
      assert.equal((await api.delete(`${EXECUTIONS}/${done.id}`)).status, 204);
      assert.equal((await api.get(`${EXECUTIONS}/${done.id}`)).status, 404);
      assert.equal((await readOnly.post(`${EXECUTIONS}/${failed.id}/retry`, { again: true })).status, 403);
    });

    it('overlap: queue runs one at a time, skip records the newcomer as skipped, parallel allows max', async () => {
      const busy = {
        id: 'busy',
        name: 'Busy',
        type: 'code.javascript',
        parameters: { code: 'const t = Date.now(); while (Date.now() - t < 1500) {} return t' },
      };
      const pipelineWith = async (name: string, concurrency: unknown) =>
        (
          await create({
            name,
            settings: { concurrency },
            nodes: [manual, busy],
            edges: [{ source: 'start', target: 'busy' }],
          })
        ).body.data.id as string;
      const twoRuns = async (id: string) => {
        const first = (await api.post(`${PIPELINES}/${id}/execute`, {})).body.data.id;
        const second = (await api.post(`${PIPELINES}/${id}/execute`, {})).body.data.id;
        return [await finished(api, first), await finished(api, second)];
      };
      const [q1, q2] = await twoRuns(await pipelineWith('Queued overlap', { mode: 'queue' }));
      assert.equal(q1.status, 'completed');
      assert.equal(q2.status, 'completed');
      assert.ok(Date.parse(q2.startedAt) >= Date.parse(q1.finishedAt), 'the second waited for the first');
      const [s1, s2] = await twoRuns(await pipelineWith('Skipped overlap', { mode: 'skip' }));
      assert.equal(s1.status, 'completed');
      assert.equal(s2.status, 'skipped');
      assert.equal(s2.reason, 'overlap');
      const [p1, p2] = await twoRuns(await pipelineWith('Parallel overlap', { mode: 'parallel', max: 2 }));
      assert.equal(p1.status, 'completed');
      assert.equal(p2.status, 'completed');
      assert.ok(
        Date.parse(p2.startedAt) < Date.parse(p1.finishedAt),
        'the second was claimed before the first finished',
      );
    });

    it('on error: continue completes with errors; the error port carries the error on', async () => {
      const made = await create({
        name: 'On error',
        nodes: [
          manual,
          {
            id: 'stop',
            name: 'Stop',
            type: 'flow.stop-error',
            parameters: { message: 'bad reading' },
            settings: { onError: 'errorPort' },
          },
          {
            id: 'after',
            name: 'After',
            type: 'transform.jsonata',
            parameters: { expression: 'error.message' },
          },
          {
            id: 'js',
            name: 'Throws',
            type: 'code.javascript',
            parameters: { code: 'throw new Error("boom")' },
            settings: { onError: 'continue' },
          },
        ],
        edges: [
          { source: 'start', target: 'stop' },
          { source: 'stop', sourcePort: 'error', target: 'after' },
          { source: 'start', target: 'js' },
        ],
        settings: { historyDetail: 'full' },
      });
      assert.deepEqual(made.body.data.problems, []);
      const done = await run(made.body.data.id);
      assert.equal(done.status, 'completed_with_errors', JSON.stringify(done));
      const runs = await nodeRuns(done.id);
      const after = runs.find((r) => r.nodeId === 'after')!;
      assert.equal(after.output, 'bad reading');
      assert.equal(runs.find((r) => r.nodeId === 'js')!.error!.message, 'the code threw Error: boom');
    });

    it('ends a runaway script at its node timeout while /healthz keeps answering', async () => {
      const made = await create({
        name: 'Runaway',
        nodes: [
          manual,
          {
            id: 'loop',
            name: 'Loop',
            type: 'code.javascript',
            parameters: { code: 'while (true) {}' },
            settings: { timeoutSeconds: 1 },
          },
        ],
        edges: [{ source: 'start', target: 'loop' }],
      });
      const queued = await api.post(`${PIPELINES}/${made.body.data.id}/execute`, {});
      const started = Date.now();
      let answered = 0;
      while (Date.now() - started < 800) {
        const health = await server.client.get('/healthz');
        assert.equal(health.status, 200);
        answered++;
      }
      assert.ok(answered >= 3, `healthz answered ${answered} times`);
      const done = await finished(api, queued.body.data.id);
      assert.equal(done.status, 'failed');
      assert.equal(done.error.code, 'timeout');
      assert.match(done.error.message, /time limit of 1000 ms/);
    });

    it('records a due schedule as skipped with the reason maintenance while maintenance is on, and runs it after', async () => {
      const MAINTENANCE = '/api/v1/organizations/settings/maintenance';
      const made = await create({
        name: 'Every second in maintenance',
        nodes: [
          { id: 'tick', name: 'Tick', type: 'trigger.schedule', parameters: { cron: '* * * * * *' } },
          { id: 'echo', name: 'Echo', type: 'transform.jsonata', parameters: { expression: 'firedAt' } },
        ],
        edges: [{ source: 'tick', target: 'echo' }],
      });
      const id = made.body.data.id;
      const executionsOf = async () =>
        server.storage.db
          .selectFrom('engine_executions')
          .select(['status', 'reason', 'started_at'])
          .where('pipeline_id', '=', id)
          .execute();
      const on = await server.admin.post(MAINTENANCE, { enabled: true, reason: 'line 4 retrofit' });
      assert.equal(on.status, 200, on.text);
      try {
        assert.equal((await api.post(`${PIPELINES}/${id}/enable`)).status, 200);
        // Two fire times recorded (the schedules re-read their pipelines every 2 s, so the first may
        // come a few seconds after enabling on a loaded machine).
        const during = await waitUntil('two fire times are recorded', async () => {
          const rows = await executionsOf();
          return rows.length >= 2 ? rows : undefined;
        });
        for (const row of during) {
          assert.equal(row.status, 'skipped');
          assert.equal(row.reason, 'maintenance');
          assert.equal(row.started_at, null, 'a skipped execution never ran');
        }
      } finally {
        const off = await server.admin.post(MAINTENANCE, { enabled: false, reason: 'retrofit done' });
        assert.equal(off.status, 200, off.text);
      }
      const after = await waitUntil('a fire time after maintenance runs', async () => {
        const rows = await executionsOf();
        return rows.some((row) => row.status !== 'skipped') ? rows : undefined;
      });
      assert.equal((await api.post(`${PIPELINES}/${id}/disable`)).status, 200);
      assert.ok(after.some((row) => row.status !== 'skipped'));
    });

    it('fires a schedule once per fire time across two replicas, only while enabled', async () => {
      const badCron = await create({
        name: 'Bad schedule',
        nodes: [{ id: 'tick', name: 'Tick', type: 'trigger.schedule', parameters: { cron: '61 * * * * *' } }],
      });
      assert.ok(
        badCron.body.data.problems.some((p: { path: string }) => p.path === '/nodes/0/parameters/cron'),
        badCron.text,
      );
      const badZone = await create({
        name: 'Bad zone',
        nodes: [
          {
            id: 'tick',
            name: 'Tick',
            type: 'trigger.schedule',
            parameters: { cron: '* * * * * *', timezone: 'Mars/Base' },
          },
        ],
      });
      assert.ok(
        badZone.body.data.problems.some((p: { path: string }) => p.path === '/nodes/0/parameters/timezone'),
        badZone.text,
      );
      const made = await create({
        name: 'Every second',
        nodes: [
          {
            id: 'tick',
            name: 'Tick',
            type: 'trigger.schedule',
            parameters: { cron: '* * * * * *', timezone: 'Europe/Berlin' },
          },
          { id: 'echo', name: 'Echo', type: 'transform.jsonata', parameters: { expression: 'firedAt' } },
        ],
        edges: [{ source: 'tick', target: 'echo' }],
      });
      const id = made.body.data.id;
      const executionsOf = async () =>
        server.storage.db.selectFrom('engine_executions').selectAll().where('pipeline_id', '=', id).execute();
      // A second replica's schedule triggers on the same database.
      const replica = new ScheduleTriggers({
        db: server.storage.db,
        executions: new ExecutionsRepository(server.storage.db),
        clock: { now: () => Date.now() },
        log: server.app.log,
        onQueued: () => server.app.engine.wake(),
        refreshMs: 100,
        tickMs: 50,
      });
      replica.start();
      try {
        await new Promise((resolve) => setTimeout(resolve, 1500));
        assert.equal((await executionsOf()).length, 0, 'a disabled pipeline does not fire');
        assert.equal((await api.post(`${PIPELINES}/${id}/enable`)).status, 200);
        await new Promise((resolve) => setTimeout(resolve, 4500));
        assert.equal((await api.post(`${PIPELINES}/${id}/disable`)).status, 200);
        await new Promise((resolve) => setTimeout(resolve, 2500));
      } finally {
        replica.stop();
      }
      const rows = await executionsOf();
      const fired = rows.map((r) => JSON.parse(r.trigger).firedAt as number).sort((a, b) => a - b);
      assert.ok(rows.length >= 3, `${rows.length} executions`);
      assert.equal(new Set(fired).size, rows.length, 'one execution per fire time');
      assert.ok(
        fired.every((t) => t % 1000 === 0),
        'fire times are whole seconds',
      );
      assert.equal((fired.at(-1)! - fired[0]!) / 1000 + 1, rows.length, 'no fire time was missed');
      const last = rows.find((r) => JSON.parse(r.trigger).firedAt === fired[0])!;
      const done = await finished(api, last.id);
      assert.ok(['completed', 'cancelled'].includes(done.status), done.status);
      await new Promise((resolve) => setTimeout(resolve, 1500));
      assert.equal((await executionsOf()).length, rows.length, 'a disabled pipeline stops firing');
    });

    it('takes over an execution whose replica died and resumes it after the last finished node', async () => {
      const made = await create({
        name: 'Resumed',
        settings: { historyDetail: 'full' },
        nodes: [
          manual,
          {
            id: 'first',
            name: 'First',
            type: 'transform.jsonata',
            parameters: { expression: '"ran again"' },
          },
          {
            id: 'second',
            name: 'Second',
            type: 'transform.jsonata',
            parameters: { expression: '$ & " then second"' },
          },
        ],
        edges: [
          { source: 'start', target: 'first' },
          { source: 'first', target: 'second' },
        ],
      });
      const pipeline = { ...made.body.data, organizationId: server.orgId } as PipelineRow;
      const repo = new ExecutionsRepository(server.storage.db);
      await server.app.engine.stop();
      let executionId: string;
      try {
        const queued = await repo.enqueue({
          organizationId: server.orgId,
          pipeline,
          trigger: { type: 'manual', nodeId: 'start', firedAt: Date.now(), source: {} },
          input: null,
          now: Date.now(),
        });
        executionId = queued.id;
        // A replica claims it, finishes the first two nodes, and dies (its lease runs out).
        const claimed = await repo.claim('dead-replica', Date.now(), 300);
        assert.equal(claimed?.id, queued.id);
        // Distinct start times, so that the runs list in the order they ran even within one millisecond.
        const startedAt = Date.now() - 10;
        for (const [index, [nodeId, output]] of (
          [
            ['start', null],
            ['first', 'before the crash'],
          ] as const
        ).entries())
          await repo.saveNodeRun({
            id: crypto.randomUUID(),
            executionId: queued.id,
            nodeId,
            nodeName: nodeId === 'start' ? 'Start' : 'First',
            type: nodeId === 'start' ? 'trigger.manual' : 'transform.jsonata',
            runIndex: 0,
            status: 'succeeded',
            port: 'out',
            attempts: [{ n: 1, startedAt: startedAt + index, durationMs: 1, error: null }],
            input: null,
            output,
            error: null,
            startedAt: startedAt + index,
            finishedAt: startedAt + index + 1,
            durationMs: 1,
            iteration: null,
            iterationKey: null,
          });
      } finally {
        server.app.engine.start();
      }
      const done = await finished(api, executionId);
      assert.equal(done.status, 'completed', JSON.stringify(done));
      assert.equal(done.claims, 2);
      const runs = await nodeRuns(executionId);
      assert.deepEqual(
        runs.map((r) => r.nodeId),
        ['start', 'first', 'second'],
      );
      assert.equal(runs[1]!.output, 'before the crash', 'the finished node did not run again');
      assert.equal(runs[2]!.output, 'before the crash then second');
    });

    it("purges finished executions older than the organization's retention, with their node runs", async () => {
      const made = await create({ name: 'Retained', nodes: [manual] });
      const recent = await run(made.body.data.id);
      const old = await run(made.body.data.id);
      const db = server.storage.db;
      const day = 86_400_000;
      await db
        .updateTable('engine_executions')
        .set({ finished_at: Date.now() - 31 * day })
        .where('id', '=', old.id)
        .execute();
      const repo = new ExecutionsRepository(db);
      assert.ok((await repo.purge(Date.now())) >= 1);
      assert.equal((await api.get(`${EXECUTIONS}/${old.id}`)).status, 404);
      assert.equal((await api.get(`${EXECUTIONS}/${recent.id}`)).status, 200);
      const orphans = await db
        .selectFrom('engine_node_runs')
        .select('id')
        .where('execution_id', '=', old.id)
        .execute();
      assert.equal(orphans.length, 0, 'node runs went with the execution');
    });

    it('claims each execution once with a lease; an expired lease is taken over and resumed', async () => {
      await server.app.engine.stop();
      try {
        const repo = new ExecutionsRepository(server.storage.db);
        const pipeline = (await create({ name: 'Leased', nodes: [manual] })).body.data as PipelineRow;
        const queued = await repo.enqueue({
          organizationId: server.orgId,
          pipeline: {
            ...pipeline,
            organizationId: server.orgId,
            settings: { ...pipeline.settings },
          } as PipelineRow,
          trigger: { type: 'manual', nodeId: 'start', firedAt: 1, source: {} },
          input: null,
          now: 1000,
        });
        const [first, second] = await Promise.all([
          repo.claim('replica-a', 2000, 30_000),
          repo.claim('replica-b', 2000, 30_000),
        ]);
        const claimed = [first, second].filter((c) => c?.id === queued.id);
        assert.equal(claimed.length, 1, 'one claimer');
        const holder = claimed[0]!.lockedBy!;
        assert.equal(await repo.claim('replica-c', 3000, 30_000), undefined, 'a live lease is not taken');
        assert.equal(await repo.renewLease(queued.id, 'replica-c', 60_000), false);
        assert.equal(await repo.renewLease(queued.id, holder, 40_000), true);
        const taken = await repo.claim('replica-c', 40_001, 30_000);
        assert.equal(taken?.id, queued.id, 'an expired lease is taken over');
        assert.equal(taken?.claims, 2);
        assert.equal(await repo.renewLease(queued.id, holder, 99_000), false, 'the old holder lost it');
      } finally {
        server.app.engine.start();
      }
    });
  });
}
