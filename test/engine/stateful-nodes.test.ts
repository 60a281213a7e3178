import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/app.js';
import { NodeStateRepository } from '../../src/modules/engine/nodes/node-state.repository.js';
import { openStorage, type Storage } from '../../src/storage/database.js';
import { testDialects } from '../helpers/dialects.js';
import { freePort } from '../helpers/free-port.js';
import { TestClient } from '../helpers/http-client.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';
import { createPat } from '../uns/uns-helpers.js';
import { createChain, problemsOf, runOnce } from './pipeline-runner.js';

/** A clock the test moves forward (time windows without waiting). */
const clock = { offset: 0, now: () => Date.now() + clock.offset };

for (const dialect of testDialects()) {
  describe(`Buffer, deadband and on-change nodes [${dialect}]`, () => {
    let server: TestServer;
    let api: TestClient;
    let token: string;

    before(async () => {
      server = await startTestServer(dialect, { clock });
      token = await createPat(server.admin, ['pipelines:read', 'pipelines:write', 'uns:read']);
      api = server.client.as({ token, org: server.orgId });
    });
    after(() => server?.close());

    const through = async (pipelineId: string, node: string, input: unknown) => {
      const { execution, runs } = await runOnce(api, pipelineId, input);
      assert.equal(execution.status, 'completed', JSON.stringify(execution));
      return runs.get(node)!;
    };

    it('lists the data and integration node types with their ports and side effects', async () => {
      const res = await api.get('/api/v1/engine/nodes');
      assert.equal(res.status, 200, res.text);
      const types = new Map(
        res.body.data.map((t: { type: string; outputs: string[]; sideEffect: string }) => [t.type, t]),
      );
      const expect: [string, string[], string][] = [
        ['transform.buffer', ['out', 'buffered', 'error'], 'none'],
        ['transform.deadband', ['out', 'suppressed', 'error'], 'none'],
        ['transform.on-change', ['out', 'unchanged', 'error'], 'none'],
        ['connection.call', ['out', 'error'], 'reads-device'],
        ['uns.fetch', ['out', 'empty', 'error'], 'none'],
        ['model.validate', ['valid', 'invalid', 'error'], 'none'],
        ['model.map', ['out', 'error'], 'none'],
        ['pipeline.run', ['out', 'error'], 'external'],
      ];
      for (const [type, outputs, sideEffect] of expect) {
        const found = types.get(type) as { outputs: string[]; sideEffect: string; parameters: object };
        assert.ok(found, type);
        assert.deepEqual(found.outputs, outputs, type);
        assert.equal(found.sideEffect, sideEffect, type);
        assert.equal((found.parameters as { type: string }).type, 'object');
      }
    });

    it('refuses bad buffer, deadband and on-change parameters, naming each', async () => {
      const cases: [string, unknown, RegExp][] = [
        ['transform.buffer', {}, /\/nodes\/1\/parameters(\/count)?: must have required property 'count'/],
        ['transform.buffer', { count: 0 }, /\/count: must be >= 1/],
        ['transform.buffer', { count: 20_000 }, /\/count: must be <= 10000/],
        ['transform.buffer', { windowMs: 'soon' }, /\/windowMs: must be integer/],
        ['transform.buffer', { count: 2, key: 'topic +' }, /\/key: does not compile/],
        ['transform.deadband', {}, /\/deadband: must have required property/],
        ['transform.deadband', { deadband: -1 }, /\/deadband: must be >= 0/],
        [
          'transform.deadband',
          { deadband: 1, mode: 'relative' },
          /\/mode: must be one of absolute, percent$/,
        ],
        ['transform.on-change', { compare: 'deep' }, /\/compare: is not a known parameter/],
        ['transform.on-change', { value: '(' }, /\/value: does not compile/],
      ];
      for (const [type, parameters, expected] of cases) {
        const problems = await problemsOf(api, type, parameters);
        assert.ok(
          problems.some((p) => expected.test(p)),
          `${type} ${JSON.stringify(parameters)}: ${problems.join('; ')}`,
        );
      }
    });

    it('buffers by count per key and emits each batch once', async () => {
      const id = await createChain(api, 'Buffer by count', [
        { id: 'buf', type: 'transform.buffer', parameters: { count: 3, key: 'line', value: 'v' } },
      ]);
      const a1 = await through(id, 'buf', { line: 'a', v: 1 });
      assert.equal(a1.port, 'buffered');
      assert.deepEqual((a1.output as { buffered: number }).buffered, 1);
      assert.equal((await through(id, 'buf', { line: 'b', v: 10 })).port, 'buffered');
      assert.equal((await through(id, 'buf', { line: 'a', v: 2 })).port, 'buffered');
      const a3 = await through(id, 'buf', { line: 'a', v: 3 });
      assert.equal(a3.port, 'out');
      assert.deepEqual((a3.output as { values: unknown[]; key: string }).values, [1, 2, 3]);
      assert.equal((a3.output as { key: string }).key, 'a');
      // Line a starts over; line b still holds its one value.
      assert.equal((await through(id, 'buf', { line: 'a', v: 4 })).port, 'buffered');
      const rows = await server.storage.db
        .selectFrom('engine_node_state')
        .select(['state_key', 'state'])
        .where('pipeline_id', '=', id)
        .orderBy('state_key')
        .execute();
      assert.deepEqual(
        rows.map((r) => [r.state_key, JSON.parse(r.state).values]),
        [
          ['a', [4]],
          ['b', [10]],
        ],
      );
    });

    it('closes a time window when a value arrives after it ended; that value opens the next', async () => {
      const id = await createChain(api, 'Buffer by time', [
        { id: 'buf', type: 'transform.buffer', parameters: { windowMs: 60_000 } },
      ]);
      assert.equal((await through(id, 'buf', 1)).port, 'buffered');
      clock.offset += 30_000;
      assert.equal((await through(id, 'buf', 2)).port, 'buffered');
      clock.offset += 30_000;
      const closed = await through(id, 'buf', 3);
      assert.equal(closed.port, 'out');
      const batch = closed.output as { values: number[]; startedAt: string; endedAt: string };
      assert.deepEqual(batch.values, [1, 2]);
      assert.ok(Date.parse(batch.endedAt) - Date.parse(batch.startedAt) >= 60_000);
      clock.offset += 10_000;
      const next = await through(id, 'buf', 4);
      assert.equal(next.port, 'buffered');
      assert.equal((next.output as { buffered: number }).buffered, 2);
    });

    it('reports numbers outside an absolute or percent deadband, per key', async () => {
      const id = await createChain(api, 'Deadband', [
        {
          id: 'db',
          type: 'transform.deadband',
          parameters: { deadband: 1, key: 'topic', value: 'v' },
        },
      ]);
      const ports: string[] = [];
      for (const [topic, v] of [
        ['a', 10],
        ['a', 10.5],
        ['b', 10.5],
        ['a', 11.2],
        ['a', 10.3],
        ['a', 12.3],
      ] as const)
        ports.push((await through(id, 'db', { topic, v })).port!);
      assert.deepEqual(ports, ['out', 'suppressed', 'out', 'out', 'suppressed', 'out']);
      const percent = await createChain(api, 'Deadband percent', [
        { id: 'db', type: 'transform.deadband', parameters: { deadband: 10, mode: 'percent' } },
      ]);
      const seen: string[] = [];
      for (const v of [100, 105, 111, 120, 122.2]) seen.push((await through(percent, 'db', v)).port!);
      assert.deepEqual(seen, ['out', 'suppressed', 'out', 'suppressed', 'out']);
      const text = await runOnce(api, percent, 'hot');
      assert.equal(text.execution.status, 'failed');
      assert.equal(text.runs.get('db')!.error!.code, 'bad_value');
    });

    it('reports by exception: a value passes when it differs from the last one passed for its key', async () => {
      const id = await createChain(api, 'On change', [
        { id: 'oc', type: 'transform.on-change', parameters: { key: 'topic', value: 'value' } },
      ]);
      const ports: string[] = [];
      for (const [topic, value] of [
        ['a', { on: true }],
        ['a', { on: true }],
        ['b', { on: true }],
        ['a', { on: false }],
        ['a', { on: false }],
        ['a', { on: true }],
      ] as const)
        ports.push((await through(id, 'oc', { topic, value })).port!);
      assert.deepEqual(ports, ['out', 'unchanged', 'out', 'out', 'unchanged', 'out']);
      const oc = await through(id, 'oc', { topic: 'c', value: 1 });
      assert.deepEqual(oc.output, { topic: 'c', value: 1 }, 'the input passes unchanged');
    });

    it('keeps buffered values across a restart: another app on the database emits the batch', async () => {
      const id = await createChain(api, 'Buffer restart', [
        { id: 'buf', type: 'transform.buffer', parameters: { count: 3 } },
      ]);
      await through(id, 'buf', 'first');
      await through(id, 'buf', 'second');
      await server.app.engine.stop();
      let restarted: { app: FastifyInstance; storage: Storage } | undefined;
      try {
        const storage = openStorage({
          databaseUrl: server.config.databaseUrl,
          dataDir: server.config.dataDir,
          poolSize: 5,
        });
        const port = await freePort();
        const app = await buildApp({ config: { ...server.config, httpPort: port }, storage, clock });
        restarted = { app, storage };
        await app.listen({ host: '127.0.0.1', port });
        const other = new TestClient(`http://127.0.0.1:${port}`).as({ token, org: server.orgId });
        const { execution, runs } = await runOnce(other, id, 'third');
        assert.equal(execution.status, 'completed');
        assert.deepEqual((runs.get('buf')!.output as { values: string[] }).values, [
          'first',
          'second',
          'third',
        ]);
      } finally {
        await restarted?.app.close();
        await restarted?.storage.close();
        server.app.engine.start();
      }
    });

    it('loses no change when executions change one state at the same time', async () => {
      const state = new NodeStateRepository(server.storage.db, () => Date.now());
      const address = { organizationId: server.orgId, pipelineId: 'p-race', nodeId: 'buf', key: 'k' };
      await Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          state.change<number[], void>(address, (held) => ({
            next: [...(held ?? []), i],
            result: undefined,
          })),
        ),
      );
      const held = await state.change<number[], number[]>(address, (s) => ({ next: s, result: s ?? [] }));
      assert.deepEqual(
        [...held].sort((a, b) => a - b),
        Array.from({ length: 20 }, (_, i) => i),
      );
      await state.change(address, () => ({ next: undefined, result: undefined }));
      const left = await server.storage.db
        .selectFrom('engine_node_state')
        .select('state')
        .where('pipeline_id', '=', 'p-race')
        .execute();
      assert.equal(left.length, 0, 'a state changed to nothing is deleted');
    });

    it('tests a stateful node on its own without storing its state', async () => {
      const test = (input: unknown) =>
        api.post('/api/v1/engine/nodes/test', {
          node: { type: 'transform.buffer', parameters: { count: 2 } },
          input,
        });
      for (const input of [1, 2]) {
        const res = await test(input);
        assert.equal(res.status, 200, res.text);
        assert.equal(res.body.data.port, 'buffered', 'each test starts from no state');
      }
      const rows = await server.storage.db
        .selectFrom('engine_node_state')
        .select('node_id')
        .where('pipeline_id', '=', '')
        .execute();
      assert.equal(rows.length, 0);
    });
  });
}
