import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import {
  type EnqueueInput,
  ExecutionsRepository,
} from '../../src/modules/engine/executions/executions.repository.js';
import { SqliteEngineThread } from '../../src/modules/engine/executions/sqlite-engine-thread.js';
import type { PipelineRow } from '../../src/modules/engine/pipelines/pipelines.repository.js';
import { testDialects } from '../helpers/dialects.js';
import type { TestClient } from '../helpers/http-client.js';
import type { TestServer } from '../helpers/test-server.js';
import { createPipelineRow, serverWithoutEngine } from './engine-helpers.js';

/**
 * The value triggers' bursts go with the engine's next bookkeeping turn (ExecutionEngine.enqueue): stored
 * and claimed in one transaction, on SQLite's bookkeeping thread and on PostgreSQL alike.
 */
for (const dialect of testDialects()) {
  describe(`New executions stored by a bookkeeping turn [${dialect}]`, () => {
    let server: TestServer;
    let api: TestClient;
    let thread: SqliteEngineThread | undefined;
    let repo: ExecutionsRepository;
    let pipeline: PipelineRow;

    before(async () => {
      ({ server, api } = await serverWithoutEngine(dialect));
      if (dialect === 'sqlite') thread = new SqliteEngineThread(server.storage.location);
      repo = new ExecutionsRepository(server.storage.db, undefined, thread);
      pipeline = await createPipelineRow(api, server.orgId, {
        name: 'Bursts with turns',
        nodes: [{ id: 'in', name: 'In', type: 'trigger.uns', parameters: { filter: 'v1/burst/#' } }],
        settings: { concurrency: { mode: 'parallel', max: 10 } },
      });
    });
    after(async () => {
      await thread?.close();
      await server?.close();
    });

    const input = (n: number, organizationId = server.orgId): EnqueueInput => ({
      organizationId,
      pipeline,
      trigger: { type: 'uns', nodeId: 'in', firedAt: 1000 + n, source: { topic: 'v1/burst/a' } },
      input: { value: n },
      now: 1000 + n,
    });
    const statuses = async (pipelineId: string) =>
      Object.fromEntries(
        (
          await server.storage.db
            .selectFrom('engine_executions')
            .select(['input', 'status'])
            .where('pipeline_id', '=', pipelineId)
            .execute()
        ).map((r) => [JSON.parse(r.input!).value, r.status]),
      );
    const turn = (enqueue: EnqueueInput[], max: number) =>
      repo.finishAndClaim('r1', { runs: [], finishes: [], enqueue }, Date.now(), 60_000, max);

    it('stores a burst and claims it in the same turn, in queue order; with no slot free, leaves it queued', async () => {
      const { claimed } = await turn([input(1), input(2), input(3)], 2);
      const ours = claimed.filter((e) => e.pipelineId === pipeline.id);
      assert.deepEqual(
        ours.map((e) => e.input),
        [{ value: 1 }, { value: 2 }],
      );
      for (const execution of ours) {
        assert.equal(execution.status, 'running');
        assert.equal(execution.fromQueue, true, 'claimed straight from the queue: no earlier runs to read');
        assert.deepEqual(execution.definition.nodes, pipeline.nodes);
      }
      assert.deepEqual(await statuses(pipeline.id), { 1: 'running', 2: 'running', 3: 'queued' });

      const none = await turn([input(4)], 0);
      assert.equal(none.claimed.length, 0);
      assert.equal((await statuses(pipeline.id))[4], 'queued');
    });

    it('stores nothing of a burst the database refuses and fails that turn; the next turn goes on', async () => {
      // An organization that does not exist: its foreign key fails the whole transaction.
      await assert.rejects(() => turn([input(5), input(6, 'no-such-organization')], 10));
      const after = await statuses(pipeline.id);
      assert.equal(after[5], undefined);
      assert.equal(after[6], undefined);
      const { claimed } = await turn([input(7)], 10);
      assert.ok(
        claimed.some((e) => e.pipelineId === pipeline.id && (e.input as { value: number }).value === 7),
      );
    });
    it('an engine stopping stores the executions enqueued just before, whose turn had not begun', async () => {
      const other = await createPipelineRow(api, server.orgId, {
        name: 'Enqueued while stopping',
        nodes: [{ id: 'in', name: 'In', type: 'trigger.uns', parameters: { filter: 'v1/burst/#' } }],
      });
      const engine = server.app.engine;
      engine.start();
      const stored = engine.enqueue([{ ...input(11), pipeline: other }]);
      await engine.stop();
      const late = new Promise((_, reject) =>
        setTimeout(() => reject(new Error('never stored')), 5000).unref(),
      );
      await Promise.race([stored, late]);
      // Stored by the stop's turn, which claims nothing.
      assert.equal((await statuses(other.id))[11], 'queued');
    });

    it("a stopped engine's enqueue stores the executions and claims none", async () => {
      const other = await createPipelineRow(api, server.orgId, {
        name: 'Stopped engine burst',
        nodes: [{ id: 'in', name: 'In', type: 'trigger.uns', parameters: { filter: 'v1/burst/#' } }],
      });
      await server.app.engine.enqueue([
        { ...input(8), pipeline: other },
        { ...input(9), pipeline: other },
      ]);
      assert.deepEqual(await statuses(other.id), { 8: 'queued', 9: 'queued' });
      await assert.rejects(() =>
        server.app.engine.enqueue([{ ...input(10, 'no-such-organization'), pipeline: other }]),
      );
      assert.equal((await statuses(other.id))[10], undefined);
    });
  });
}
