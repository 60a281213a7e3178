import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { PipelineRow } from '../../src/modules/engine/pipelines/pipelines.repository.js';
import { ExecutionsRepository } from '../../src/modules/engine/queue/executions.repository.js';
import { testDialects } from '../helpers/dialects.js';
import type { TestClient } from '../helpers/http-client.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';
import { createPat } from '../uns/uns-helpers.js';
import { createChain, EXECUTIONS, finished, PIPELINES, problemsOf, runOnce } from './pipeline-runner.js';

const MINUTE = 60_000;

for (const dialect of testDialects()) {
  describe(`uns.fetch, model and pipeline.run nodes [${dialect}]`, () => {
    let server: TestServer;
    let api: TestClient;
    /** A whole minute a day ago: the history below is published from it on. */
    const base = Math.floor((Date.now() - 86_400_000) / MINUTE) * MINUTE;
    const at = (minutes: number) => new Date(base + minutes * MINUTE).toISOString();

    before(async () => {
      server = await startTestServer(dialect);
      const token = await createPat(server.admin, [
        'pipelines:read',
        'pipelines:write',
        'uns:read',
        'uns:publish',
        'uns:write',
        'models:read',
        'models:write',
      ]);
      api = server.client.as({ token, org: server.orgId });
      for (let m = 0; m < 6; m++) {
        const res = await api.post('/api/v1/uns/data/publish', {
          topic: 'v1/plant/flow',
          value: m + 1,
          timestamp: at(m),
          quality: m === 5 ? 1 : 0,
        });
        assert.equal(res.status, 200, res.text);
      }
      const empty = await api.post('/api/v1/uns/topics', { path: 'v1/plant/empty' });
      assert.ok([200, 201].includes(empty.status), empty.text);
    });
    after(() => server?.close());

    const fetched = async (parameters: Record<string, unknown>, input: unknown = null) => {
      const res = await api.post('/api/v1/engine/nodes/test', {
        node: { type: 'uns.fetch', parameters },
        input,
      });
      assert.equal(res.status, 200, res.text);
      return res.body.data as { output: any; port: string; error: { code: string; message: string } | null };
    };

    it('fetches the latest value of a topic with its quality and timestamp', async () => {
      const latest = await fetched({ topic: '{{ "v1/plant/" & name }}' }, { name: 'flow' });
      assert.equal(latest.error, null, JSON.stringify(latest));
      assert.equal(latest.port, 'out');
      assert.equal(latest.output.value, 6);
      assert.equal(latest.output.quality, 1);
      assert.equal(Date.parse(latest.output.timestamp), base + 5 * MINUTE);
      const empty = await fetched({ topic: 'v1/plant/empty' });
      assert.equal(empty.port, 'empty');
      assert.equal(empty.output.value, null);
      const missing = await fetched({ topic: 'v1/plant/nowhere' });
      assert.equal(missing.error!.code, 'not_found');
      const wildcard = await fetched({ topic: 'v1/plant/+' });
      assert.equal(wildcard.error!.code, 'bad_parameter');
    });

    it('fetches history in a range, by limit and order, the last duration, and in time buckets', async () => {
      const range = await fetched({ topic: 'v1/plant/flow', mode: 'history', from: at(1), to: at(4) });
      assert.deepEqual(
        range.output.values.map((v: { value: number }) => v.value),
        [2, 3, 4],
      );
      assert.equal(range.output.count, 3);
      assert.equal(range.output.more, false);
      const page = await fetched({ topic: 'v1/plant/flow', mode: 'history', limit: 2, order: 'desc' });
      assert.deepEqual(
        page.output.values.map((v: { value: number }) => v.value),
        [6, 5],
      );
      assert.equal(page.output.more, true);
      const recent = await fetched({ topic: 'v1/plant/flow', mode: 'history', last: '1h' });
      assert.equal(recent.port, 'empty', 'nothing in the last hour');
      const day = await fetched({ topic: 'v1/plant/flow', mode: 'history', last: '2d' });
      assert.equal(day.output.count, 6);
      const buckets = await fetched({
        topic: 'v1/plant/flow',
        mode: 'history',
        from: at(0),
        to: at(6),
        aggregate: { interval: '2m' },
      });
      assert.deepEqual(
        buckets.output.buckets.map((b: { avg: number; count: number }) => [b.count, b.avg]),
        [
          [2, 1.5],
          [2, 3.5],
          [2, 5.5],
        ],
      );
    });

    it('refuses bad uns.fetch parameters, naming each', async () => {
      const cases: [unknown, RegExp][] = [
        [{}, /\/topic: must have required property/],
        [{ topic: 'v1/a', mode: 'all' }, /\/mode: must be one of latest, history$/],
        [{ topic: 'v1/a', limit: 5 }, /\/limit: applies to mode history only/],
        [{ topic: 'v1/a', mode: 'history', from: 'yesterday' }, /\/from: .*/],
        [{ topic: 'v1/a', mode: 'history', last: '5 minutes' }, /\/last: must match pattern/],
        [{ topic: 'v1/a', mode: 'history', last: '5m', from: at(0) }, /\/last: and from exclude each other/],
        [
          { topic: 'v1/a', mode: 'history', aggregate: { interval: '1m' } },
          /\/aggregate: needs a bounded range/,
        ],
        [{ topic: 'v1/a', mode: 'history', limit: 0 }, /\/limit: must be >= 1/],
        [{ topic: 'v1/a', mode: 'history', last: '0s' }, /\/last: must match pattern/],
      ];
      for (const [parameters, expected] of cases) {
        const problems = await problemsOf(api, 'uns.fetch', parameters);
        assert.ok(
          problems.some((p) => expected.test(p)),
          `${JSON.stringify(parameters)}: ${problems.join('; ')}`,
        );
      }
    });

    let modelId: string;
    it('validates values against a model: valid and invalid ports, errors by JSON pointer', async () => {
      const model = await api.post('/api/v1/engine/models', {
        name: 'Pump',
        fields: [
          { name: 'pressure', type: 'number', required: true, constraints: { min: 0, max: 1000 } },
          { name: 'state', type: 'enum', enum: ['off', 'on'] },
        ],
      });
      assert.equal(model.status, 201, model.text);
      modelId = model.body.data.id;
      const id = await createChain(api, 'Validate', [
        { id: 'check', type: 'model.validate', parameters: { modelId } },
      ]);
      const valid = (await runOnce(api, id, { pressure: 5, state: 'on' })).runs.get('check')!;
      assert.equal(valid.port, 'valid');
      assert.deepEqual(valid.output, { pressure: 5, state: 'on' });
      const invalid = (await runOnce(api, id, { pressure: -1, state: 'broken' })).runs.get('check')!;
      assert.equal(invalid.port, 'invalid');
      const { errors } = invalid.output as { errors: { path: string }[] };
      assert.deepEqual(errors.map((e) => e.path).sort(), ['/pressure', '/state']);
      const unknown = await api.post('/api/v1/engine/nodes/test', {
        node: { type: 'model.validate', parameters: { modelId: 'no-such-model' } },
        input: {},
      });
      assert.equal(unknown.body.data.error.code, 'not_found');
    });

    it('maps the input onto a model with JSONata per field and validates the instance', async () => {
      const map = (parameters: Record<string, unknown>, input: unknown) =>
        api
          .post('/api/v1/engine/nodes/test', { node: { type: 'model.map', parameters }, input })
          .then((res) => {
            assert.equal(res.status, 200, res.text);
            return res.body.data;
          });
      const mapping = { pressure: 'raw / 10', state: 'running ? "on" : "off"' };
      const instance = await map({ modelId, mapping }, { raw: 55, running: true });
      assert.equal(instance.error, null, JSON.stringify(instance));
      assert.deepEqual(instance.output, { pressure: 5.5, state: 'on' });
      const invalid = await map({ modelId, mapping }, { raw: -10, running: false });
      assert.equal(invalid.error.code, 'invalid_instance');
      assert.match(invalid.error.message, /\/pressure/);
      const unchecked = await map({ modelId, mapping, validate: false }, { raw: -10, running: false });
      assert.deepEqual(unchecked.output, { pressure: -1, state: 'off' });
      const stray = await map({ modelId, mapping: { temperature: 'raw' } }, { raw: 1 });
      assert.equal(stray.error.code, 'bad_parameter');
      assert.match(stray.error.message, /"temperature" is not a field/);
      const missing = await map({ modelId, mapping: { state: '"on"' } }, {});
      assert.equal(missing.error.code, 'invalid_instance', 'pressure is required');
    });

    it('refuses bad model node parameters, naming each', async () => {
      const cases: [string, unknown, RegExp][] = [
        ['model.validate', {}, /\/modelId: must have required property/],
        ['model.validate', { modelId: 'm', value: '(' }, /\/value: does not compile/],
        ['model.map', { modelId: 'm' }, /\/mapping: must have required property/],
        ['model.map', { modelId: 'm', mapping: {} }, /\/mapping: must NOT have fewer than 1 properties/],
        ['model.map', { modelId: 'm', mapping: { a: 'x +' } }, /\/mapping\/a: does not compile/],
        ['model.map', { modelId: 'm', mapping: { a: 5 } }, /\/mapping\/a: must be string/],
      ];
      for (const [type, parameters, expected] of cases) {
        const problems = await problemsOf(api, type, parameters);
        assert.ok(
          problems.some((p) => expected.test(p)),
          `${type} ${JSON.stringify(parameters)}: ${problems.join('; ')}`,
        );
      }
    });

    it('runs another pipeline and waits for its result, or only queues it', async () => {
      const child = await createChain(api, 'Child', [
        { id: 'double', type: 'transform.jsonata', parameters: { expression: '{ "doubled": n * 2 }' } },
      ]);
      const parent = await createChain(api, 'Parent', [
        {
          id: 'call',
          type: 'pipeline.run',
          parameters: { pipelineId: child, wait: true, input: '{ "n": x }' },
        },
      ]);
      const { execution, runs } = await runOnce(api, parent, { x: 21 });
      assert.equal(execution.status, 'completed', JSON.stringify(execution));
      const output = runs.get('call')!.output as {
        executionId: string;
        status: string;
        outputs: Record<string, unknown>;
      };
      assert.equal(output.status, 'completed');
      assert.deepEqual(output.outputs, { double: { doubled: 42 } });
      const childRun = (await api.get(`${EXECUTIONS}/${output.executionId}`)).body.data;
      assert.equal(childRun.pipelineId, child);
      assert.equal(childRun.trigger.type, 'pipeline');
      assert.equal(childRun.trigger.source.executionId, execution.id);
      const queueing = await createChain(api, 'Queueing parent', [
        { id: 'call', type: 'pipeline.run', parameters: { pipelineId: child } },
      ]);
      const queued = (await runOnce(api, queueing, { n: 5 })).runs.get('call')!.output as {
        executionId: string;
        status: string;
      };
      assert.equal(queued.status, 'queued');
      assert.equal((await finished(api, queued.executionId)).status, 'completed');
    });

    it('resumed after a crash, waits for the execution it queued before instead of queueing another', async () => {
      const child = await createChain(api, 'Resumed child', [
        { id: 'echo', type: 'transform.jsonata', parameters: { expression: '{ "got": n }' } },
      ]);
      const parentId = await createChain(api, 'Resumed parent', [
        { id: 'call', type: 'pipeline.run', parameters: { pipelineId: child, wait: true } },
      ]);
      const row = async (id: string) => (await api.get(`${PIPELINES}/${id}`)).body.data as PipelineRow;
      const repo = new ExecutionsRepository(server.storage.db);
      const now = Date.now();
      // The parent, not yet due; the child its node queued before the replica died.
      const parent = await repo.enqueue({
        organizationId: server.orgId,
        pipeline: await row(parentId),
        trigger: { type: 'manual', nodeId: 'start', firedAt: now, source: {} },
        input: { n: 2 },
        now: now + 3_600_000,
      });
      const earlier = await repo.enqueue({
        organizationId: server.orgId,
        pipeline: await row(child),
        trigger: { type: 'pipeline', nodeId: 'start', firedAt: now, source: { executionId: parent.id } },
        input: { n: 1 },
        now,
        idempotencyKey: `pipeline.run:${parent.id}:call::1`,
      });
      assert.ok(earlier);
      await server.storage.db
        .updateTable('engine_executions')
        .set({ run_at: now })
        .where('id', '=', parent.id)
        .execute();
      server.app.engine.wake();
      const done = await finished(api, parent.id);
      assert.equal(done.status, 'completed', JSON.stringify(done));
      const runs = (await api.get(`${EXECUTIONS}/${parent.id}/nodes`)).body.data as {
        nodeId: string;
        output: { executionId: string; outputs: Record<string, unknown> };
      }[];
      const call = runs.find((r) => r.nodeId === 'call')!;
      assert.equal(call.output.executionId, earlier.id);
      assert.deepEqual(call.output.outputs, { echo: { got: 1 } });
      const children = (await api.get(`${EXECUTIONS}?pipelineId=${child}`)).body.data;
      assert.equal(children.length, 1, 'no second execution was queued');
    });

    it('fails the node when the pipeline it waited for failed, or does not exist', async () => {
      const failing = await createChain(api, 'Failing child', [
        { id: 'stop', type: 'flow.stop-error', parameters: { message: 'tank empty' } },
      ]);
      const parent = await createChain(api, 'Parent of failing', [
        { id: 'call', type: 'pipeline.run', parameters: { pipelineId: failing, wait: true } },
      ]);
      const { execution } = await runOnce(api, parent, null);
      assert.equal(execution.status, 'failed');
      assert.equal(execution.error!.code, 'pipeline_failed');
      assert.match(execution.error!.message, /tank empty/);
      const ghost = await createChain(api, 'Parent of nothing', [
        { id: 'call', type: 'pipeline.run', parameters: { pipelineId: 'no-such-pipeline' } },
      ]);
      const none = await runOnce(api, ghost, null);
      assert.equal(none.execution.error!.code, 'not_found');
    });

    it('stops pipelines running each other at depth 8, and refuses to wait for one already in the chain', async () => {
      const recursive = await createChain(api, 'Recursive', [
        { id: 'call', type: 'pipeline.run', parameters: { pipelineId: '{{ pid }}' } },
      ]);
      await runOnce(api, recursive, { pid: recursive });
      const all = async () =>
        (await api.get(`${EXECUTIONS}?pipelineId=${recursive}&limit=100`)).body.data as {
          id: string;
          status: string;
          error: { code: string } | null;
        }[];
      const until = Date.now() + 20_000;
      let executions = await all();
      while (
        (executions.length < 8 || executions.some((e) => ['queued', 'running'].includes(e.status))) &&
        Date.now() < until
      ) {
        await new Promise((resolve) => setTimeout(resolve, 100));
        executions = await all();
      }
      assert.equal(executions.length, 8, JSON.stringify(executions.map((e) => e.status)));
      const failed = executions.filter((e) => e.status === 'failed');
      assert.equal(failed.length, 1);
      assert.equal(failed[0]!.error!.code, 'too_deep');
      const waiting = await createChain(api, 'Waits for itself', [
        { id: 'call', type: 'pipeline.run', parameters: { pipelineId: '{{ pid }}', wait: true } },
      ]);
      const { execution } = await runOnce(api, waiting, { pid: waiting });
      assert.equal(execution.status, 'failed');
      assert.equal(execution.error!.code, 'cycle');
      const count = (await api.get(`${EXECUTIONS}?pipelineId=${waiting}`)).body.data.length;
      assert.equal(count, 1, 'nothing was queued');
    });

    it('refuses bad pipeline.run parameters, naming each', async () => {
      const cases: [unknown, RegExp][] = [
        [{}, /\/pipelineId: must have required property/],
        [{ pipelineId: 'p', wait: 'yes' }, /\/wait: must be boolean/],
        [{ pipelineId: 'p', input: '{' }, /\/input: does not compile/],
        [{ pipelineId: 'p', version: 2 }, /\/version: is not a known parameter/],
      ];
      for (const [parameters, expected] of cases) {
        const problems = await problemsOf(api, 'pipeline.run', parameters);
        assert.ok(
          problems.some((p) => expected.test(p)),
          `${JSON.stringify(parameters)}: ${problems.join('; ')}`,
        );
      }
    });
  });
}
