import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { PipelineRow } from '../../src/modules/engine/pipelines/pipelines.repository.js';
import {
  type ExecutionRow,
  ExecutionsRepository,
} from '../../src/modules/engine/queue/executions.repository.js';
import { SqliteEngineThread } from '../../src/modules/engine/queue/sqlite-engine-thread.js';
import { testDialects } from '../helpers/dialects.js';
import type { TestClient } from '../helpers/http-client.js';
import type { TestServer } from '../helpers/test-server.js';
import { createPipelineRow, manual, serverWithoutEngine } from './engine-helpers.js';

/**
 * A pipeline's concurrency holds across replicas claiming at the same moment: `queue` runs one execution
 * at a time and `parallel` at most `max`, however many replicas claim at once (on PostgreSQL their claims
 * run in concurrent transactions; on SQLite one after another).
 */
for (const dialect of testDialects()) {
  describe(`Claims across replicas keep each pipeline's concurrency [${dialect}]`, () => {
    let server: TestServer;
    let api: TestClient;
    let repo: ExecutionsRepository;

    before(async () => {
      // Only the test's replicas claim.
      ({ server, api, repo } = await serverWithoutEngine(dialect));
    });
    after(() => server?.close());

    const pipelineWith = (name: string, concurrency: { mode: string; max?: number }) =>
      createPipelineRow(api, server.orgId, { name, settings: { concurrency }, nodes: [manual] });
    const queue = (pipeline: PipelineRow, count: number, using = repo) =>
      using.enqueueMany(
        Array.from({ length: count }, (_, i) => ({
          organizationId: server.orgId,
          pipeline,
          trigger: { type: 'manual', nodeId: 'start', firedAt: i, source: {} },
          input: i,
          now: Date.now(),
        })),
      );
    const runningOf = async (pipelineId: string) =>
      Number(
        (
          await server.storage.db
            .selectFrom('engine_executions')
            .select((eb) => eb.fn.countAll().as('n'))
            .where('pipeline_id', '=', pipelineId)
            .where('status', '=', 'running')
            .executeTakeFirstOrThrow()
        ).n,
      );

    /** Five replicas (each with its repository) record their ends and claim at the same moment, round after round. */
    const claimRounds = async (repos: ExecutionsRepository[], label: string) => {
      const queued = await pipelineWith(`One at a time ${label}`, { mode: 'queue' });
      const parallel = await pipelineWith(`Two at a time ${label}`, { mode: 'parallel', max: 2 });
      const ids = new Set([...(await queue(queued, 12, repos[0])), ...(await queue(parallel, 12, repos[0]))]);
      const replicas = repos.map((_, i) => `replica-${label}-${i}`);
      const held = new Map<string, ExecutionRow[]>(replicas.map((r) => [r, []]));
      let completed = 0;
      for (let round = 0; round < 40 && completed < 24; round++) {
        const now = Date.now();
        const turns = await Promise.all(
          replicas.map((replica, i) =>
            repos[i]!.finishAndClaim(
              replica,
              {
                runs: [],
                finishes: held.get(replica)!.map((e) => ({
                  id: e.id,
                  status: 'completed' as const,
                  finishedAt: now,
                  error: null,
                  reason: null,
                })),
              },
              now,
              30_000,
              10,
            ),
          ),
        );
        replicas.forEach((replica, i) => {
          completed += turns[i]!.finished.size;
          for (const e of turns[i]!.claimed) {
            assert.ok(ids.has(e.id), 'a claim answers only executions of the test');
            assert.equal(e.status, 'running');
            assert.equal(e.lockedBy, replica);
            assert.equal(e.fromQueue, true, 'claimed once, from the queue');
            assert.ok(e.definition.nodes.length > 0, 'with its definition');
          }
          held.set(replica, turns[i]!.claimed);
        });
        assert.ok((await runningOf(queued.id)) <= 1, `round ${round}: queue ran more than one`);
        assert.ok((await runningOf(parallel.id)) <= 2, `round ${round}: parallel ran more than two`);
      }
      assert.equal(completed, 24, 'every execution ran, one claim each');
      const rows = await server.storage.db
        .selectFrom('engine_executions')
        .select(['status', 'claims'])
        .where('pipeline_id', 'in', [queued.id, parallel.id])
        .execute();
      assert.deepEqual(
        rows.map((r) => [r.status, Number(r.claims)]),
        rows.map(() => ['completed', 1]),
      );
    };

    it('queue: one at a time, parallel: at most max, while five replicas claim at once, round after round', () =>
      claimRounds([repo, repo, repo, repo, repo], 'shared'));

    it("a replica's two turns in flight commit in the order they were asked for", async () => {
      const pipeline = await pipelineWith('Ordered turns', { mode: 'parallel', max: 5 });
      const [executionId] = await queue(pipeline, 1);
      // The first turn is long (3,000 node runs to store), the second has nothing to do.
      const runs = Array.from({ length: 3000 }, (_, i) => ({
        id: `run-${i}`,
        executionId: executionId!,
        nodeId: 'start',
        nodeName: 'Start',
        type: 'trigger.manual',
        runIndex: i,
        status: 'succeeded' as const,
        port: 'out',
        attempts: [],
        input: null,
        output: null,
        error: null,
        startedAt: i,
        finishedAt: i,
        durationMs: 0,
        iteration: null,
        iterationKey: null,
      }));
      const ended: string[] = [];
      const now = Date.now();
      await Promise.all([
        repo
          .finishAndClaim('replica-order', { runs, finishes: [] }, now, 30_000, 0)
          .then(() => ended.push('first')),
        repo
          .finishAndClaim('replica-order', { runs: [], finishes: [] }, now, 30_000, 0)
          .then(() => ended.push('second')),
      ]);
      assert.deepEqual(ended, ['first', 'second']);
      // Out of the way of the other claims here.
      await server.storage.db
        .updateTable('engine_executions')
        .set({ status: 'cancelled' })
        .where('id', '=', executionId!)
        .execute();
    });

    if (dialect === 'sqlite')
      it('the same with each replica claiming on its own bookkeeping thread (five connections to the file)', async () => {
        const threads = Array.from({ length: 5 }, () => new SqliteEngineThread(server.storage.location));
        try {
          await claimRounds(
            threads.map((thread) => new ExecutionsRepository(server.storage.db, undefined, thread)),
            'threads',
          );
        } finally {
          await Promise.all(threads.map((thread) => thread.close()));
        }
      });
  });
}
