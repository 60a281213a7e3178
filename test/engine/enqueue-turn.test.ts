import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import type { PipelineRow } from '../../src/modules/engine/pipelines/pipelines.repository.js';
import {
  type EnqueueInput,
  ExecutionsRepository,
} from '../../src/modules/engine/queue/executions.repository.js';
import { SqliteEngineThread } from '../../src/modules/engine/queue/sqlite-engine-thread.js';
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

    /** The turn's paths: the bookkeeping thread (SQLite) or the pool, and the query builder's on SQLite. */
    const turnPaths = () => (thread ? [repo, new ExecutionsRepository(server.storage.db)] : [repo]);
    const pipelineOf = (name: string, settings: object) =>
      createPipelineRow(api, server.orgId, {
        name,
        nodes: [{ id: 'in', name: 'In', type: 'trigger.uns', parameters: { filter: 'v1/burst/#' } }],
        settings,
      });
    const burstTurn = (turns: ExecutionsRepository, enqueue: EnqueueInput[], max: number) =>
      turns.finishAndClaim('r1', { runs: [], finishes: [], enqueue }, Date.now(), 60_000, max);

    it('new executions wait behind stored ones of their pipeline: queue mode claims the stored one and leaves the new queued', async () => {
      for (const [i, turns] of turnPaths().entries()) {
        const one = await pipelineOf(`One at a time ${i}`, { concurrency: { mode: 'queue' } });
        await turns.enqueueMany([{ ...input(30), pipeline: one }]);
        const { claimed } = await burstTurn(
          turns,
          [31, 32].map((n) => ({ ...input(n), pipeline: one })),
          50,
        );
        assert.deepEqual(
          claimed.filter((e) => e.pipelineId === one.id).map((e) => e.input),
          [{ value: 30 }],
        );
        assert.deepEqual(await statuses(one.id), { 30: 'running', 31: 'queued', 32: 'queued' });
      }
    });

    it('skip mode records new executions of a busy pipeline as skipped (overlap), never running', async () => {
      for (const [i, turns] of turnPaths().entries()) {
        const skip = await pipelineOf(`Skip when busy ${i}`, { concurrency: { mode: 'skip' } });
        const first = await burstTurn(turns, [{ ...input(40), pipeline: skip }], 50);
        assert.equal(first.claimed.filter((e) => e.pipelineId === skip.id).length, 1);
        const second = await burstTurn(
          turns,
          [41, 42].map((n) => ({ ...input(n), pipeline: skip })),
          50,
        );
        assert.equal(second.claimed.filter((e) => e.pipelineId === skip.id).length, 0);
        assert.deepEqual(await statuses(skip.id), { 40: 'running', 41: 'skipped', 42: 'skipped' });
        const reasons = await server.storage.db
          .selectFrom('engine_executions')
          .select(['reason', 'finished_at'])
          .where('pipeline_id', '=', skip.id)
          .where('status', '=', 'skipped')
          .execute();
        assert.deepEqual(
          reasons.map((r) => [r.reason, r.finished_at !== null]),
          [
            ['overlap', true],
            ['overlap', true],
          ],
        );
      }
    });

    it('a new execution of higher priority is claimed before a stored one, and the stored one stays queued', async () => {
      for (const [i, turns] of turnPaths().entries()) {
        const low = await pipelineOf(`Low ${i}`, {
          priority: 'low',
          concurrency: { mode: 'parallel', max: 10 },
        });
        const high = await pipelineOf(`High ${i}`, {
          priority: 'high',
          concurrency: { mode: 'parallel', max: 10 },
        });
        // Whatever earlier tests left queued goes first: the claim below takes only what is left.
        await burstTurn(turns, [], 1000);
        await turns.enqueueMany([{ ...input(50), pipeline: low }]);
        const { claimed } = await burstTurn(turns, [{ ...input(51), pipeline: high }], 1);
        assert.deepEqual(
          claimed.map((e) => [e.pipelineId, e.input, e.status, e.fromQueue, e.claims]),
          [[high.id, { value: 51 }, 'running', true, 1]],
        );
        assert.deepEqual(await statuses(low.id), { 50: 'queued' });
        const stored = await server.storage.db
          .selectFrom('engine_executions')
          .select(['status', 'locked_by', 'claims', 'started_at', 'lease_until'])
          .where('id', '=', claimed[0]!.id)
          .executeTakeFirstOrThrow();
        assert.equal(stored.status, 'running');
        assert.equal(stored.locked_by, 'r1');
        assert.equal(Number(stored.claims), 1);
        assert.ok(stored.started_at !== null && stored.lease_until !== null);
        // Out of the way of later claims here.
        await burstTurn(turns, [], 1000);
      }
    });

    it("a claim reads on past a busy pipeline's queue, a few rows at a time, and stops at twice its slots", async () => {
      for (const [i, turns] of turnPaths().entries()) {
        // Whatever earlier tests left that can run goes first: what is left queued here is busy.
        await burstTurn(turns, [], 1000);
        const one = await pipelineOf(`Busy one at a time ${i}`, { concurrency: { mode: 'queue' } });
        const many = await pipelineOf(`Behind the busy ${i}`, { concurrency: { mode: 'parallel', max: 10 } });
        const of = (pipeline: PipelineRow, ...ns: number[]) => ns.map((n) => ({ ...input(n), pipeline }));
        await burstTurn(turns, of(one, 60), 1);
        // Six of the busy pipeline, then one of another: on SQLite's thread the claim of two reads them
        // two at a time, elsewhere 20 at once.
        await turns.enqueueMany([...of(one, 61, 62, 63, 64, 65, 66), ...of(many, 68)]);
        // New ones between and after: 67 comes before the stored 68, 69 after it.
        const { claimed } = await burstTurn(turns, of(many, 67, 69), 2);
        assert.deepEqual(
          claimed.map((e) => [e.pipelineId, e.input]),
          [
            [many.id, { value: 67 }],
            [many.id, { value: 68 }],
          ],
        );
        assert.deepEqual(await statuses(many.id), { 67: 'running', 68: 'running', 69: 'queued' });
        assert.equal((await statuses(one.id))[61], 'queued');

        // Past twice its slots (20 at least) of busy ones, the claim stops reading: what is behind them,
        // stored or new, waits queued for a later claim.
        await burstTurn(turns, [], 1000);
        const more = Array.from({ length: 20 }, (_, k) => 70 + k);
        await turns.enqueueMany([...of(one, ...more), ...of(many, 91)]);
        const stopped = await burstTurn(turns, of(many, 92), 2);
        assert.deepEqual(stopped.claimed, []);
        assert.deepEqual(await statuses(many.id), {
          67: 'running',
          68: 'running',
          69: 'running',
          91: 'queued',
          92: 'queued',
        });
        // Out of the way of later claims here.
        await server.storage.db
          .updateTable('engine_executions')
          .set({ status: 'cancelled', finished_at: Date.now() })
          .where('pipeline_id', 'in', [one.id, many.id])
          .where('status', 'in', ['queued', 'running'])
          .execute();
      }
    });

    it('a new execution claimed in its own turn is written once: inserted running, never updated from queued', async () => {
      // Every change of an execution from queued to running, as the database makes it.
      const db = server.storage.db;
      await sql`create table test_queued_to_running (id text)`.execute(db);
      if (dialect === 'postgres') {
        await sql`create function test_log_claim() returns trigger language plpgsql as
          $$ begin insert into test_queued_to_running values (new.id); return new; end $$`.execute(db);
        await sql`create trigger test_log_claim after update on engine_executions for each row
          when (old.status = 'queued' and new.status = 'running') execute function test_log_claim()`.execute(
          db,
        );
      } else {
        await sql`create trigger test_log_claim after update on engine_executions for each row
          when old.status = 'queued' and new.status = 'running'
          begin insert into test_queued_to_running values (new.id); end`.execute(db);
      }
      const logged = async () =>
        (await sql<{ id: string }>`select id from test_queued_to_running`.execute(db)).rows.map((r) => r.id);
      try {
        for (const [i, turns] of turnPaths().entries()) {
          const once = await pipelineOf(`Written once ${i}`, { concurrency: { mode: 'parallel', max: 10 } });
          await burstTurn(turns, [], 1000);
          // A stored one is claimed by an update (the log sees that it can see one), the new ones are not.
          await turns.enqueueMany([{ ...input(60), pipeline: once }]);
          const { claimed } = await burstTurn(
            turns,
            [61, 62].map((n) => ({ ...input(n), pipeline: once })),
            1000,
          );
          const ours = claimed.filter((e) => e.pipelineId === once.id);
          assert.deepEqual(
            ours.map((e) => [e.input, e.status, e.claims, e.fromQueue]),
            [
              [{ value: 60 }, 'running', 1, true],
              [{ value: 61 }, 'running', 1, true],
              [{ value: 62 }, 'running', 1, true],
            ],
          );
          const updated = new Set(await logged());
          assert.deepEqual(
            ours.map((e) => updated.has(e.id)),
            [true, false, false],
          );
          assert.deepEqual(await statuses(once.id), { 60: 'running', 61: 'running', 62: 'running' });
        }
      } finally {
        await sql`drop trigger test_log_claim${sql.raw(dialect === 'postgres' ? ' on engine_executions' : '')}`.execute(
          db,
        );
        if (dialect === 'postgres') await sql`drop function test_log_claim()`.execute(db);
        await sql`drop table test_queued_to_running`.execute(db);
      }
    });

    it('a turn records each end with its own time, status and error, and leaves an execution the replica no longer holds as it was', async () => {
      const ended = await createPipelineRow(api, server.orgId, {
        name: 'Ends in one turn',
        nodes: [{ id: 'in', name: 'In', type: 'trigger.uns', parameters: { filter: 'v1/burst/#' } }],
        settings: { concurrency: { mode: 'parallel', max: 10 } },
      });
      // Through the bookkeeping thread (SQLite) or the pool (PostgreSQL), and through the query builder on
      // SQLite too (finishExecutions), as an in-memory database runs it.
      const repos = thread ? [repo, new ExecutionsRepository(server.storage.db)] : [repo];
      for (const [r, turns] of repos.entries()) {
        const { claimed } = await turns.finishAndClaim(
          'r1',
          {
            runs: [],
            finishes: [],
            enqueue: [20, 21, 22, 23].map((n) => ({ ...input(n + r * 10), pipeline: ended })),
          },
          Date.now(),
          60_000,
          50,
        );
        const ids = claimed.filter((e) => e.pipelineId === ended.id).map((e) => e.id);
        assert.equal(ids.length, 4);
        const [a, b, c, d] = ids as [string, string, string, string];
        const failure = { nodeId: 'in', nodeName: 'In', code: 'NODE_FAILED', message: 'boom' };
        const finishes = [
          { id: a, status: 'completed' as const, finishedAt: 5001, error: null, reason: null },
          { id: b, status: 'completed' as const, finishedAt: 5002, error: null, reason: null },
          { id: c, status: 'failed' as const, finishedAt: 5003, error: failure, reason: 'node failed' },
        ];
        const turn = await turns.finishAndClaim('r1', { runs: [], finishes }, Date.now(), 60_000, 0);
        // Another replica does not hold d: its end is not recorded.
        const other = await turns.finishAndClaim(
          'r2',
          {
            runs: [],
            finishes: [{ id: d, status: 'completed', finishedAt: 5004, error: null, reason: null }],
          },
          Date.now(),
          60_000,
          0,
        );
        assert.deepEqual([...turn.finished].sort(), [a, b, c].sort());
        assert.equal(other.finished.size, 0);
        const rows = new Map(
          (
            await server.storage.db
              .selectFrom('engine_executions')
              .select(['id', 'status', 'reason', 'error', 'finished_at', 'lease_until'])
              .where('id', 'in', ids)
              .execute()
          ).map((row) => [row.id, row]),
        );
        const view = (id: string) => {
          const row = rows.get(id)!;
          return {
            status: row.status,
            reason: row.reason,
            error: row.error && JSON.parse(row.error),
            finishedAt: row.finished_at === null ? null : Number(row.finished_at),
            leased: row.lease_until !== null,
          };
        };
        assert.deepEqual(view(a), {
          status: 'completed',
          reason: null,
          error: null,
          finishedAt: 5001,
          leased: false,
        });
        assert.deepEqual(view(b), {
          status: 'completed',
          reason: null,
          error: null,
          finishedAt: 5002,
          leased: false,
        });
        assert.deepEqual(view(c), {
          status: 'failed',
          reason: 'node failed',
          error: failure,
          finishedAt: 5003,
          leased: false,
        });
        assert.deepEqual(view(d), {
          status: 'running',
          reason: null,
          error: null,
          finishedAt: null,
          leased: true,
        });
      }
    });

    it('executions to resume (expired leases, waits come due) are claimed before the queue, in claim order: priority, then age', async () => {
      for (const [i, turns] of turnPaths().entries()) {
        const resumed = await pipelineOf(`Resumed ${i}`, { concurrency: { mode: 'parallel', max: 1000 } });
        // Whatever earlier tests left queued goes first, its lease long: the claims below see only these.
        await burstTurn(turns, [], 1000);
        const ids = await turns.enqueueMany(
          Array.from({ length: 12 }, (_, n) => ({ ...input(100 + n), pipeline: resumed })),
        );
        const set = (id: string, change: Record<string, unknown>) =>
          server.storage.db.updateTable('engine_executions').set(change).where('id', '=', id).execute();
        const now = Date.now();
        // 0-7 ran on a replica that died (leases expired at different times), 8 and 9 wait and are due
        // (one of high priority), 10 and 11 stay queued.
        for (let n = 0; n < 8; n++)
          await set(ids[n]!, {
            status: 'running',
            locked_by: 'gone',
            lease_until: now - 1000 + n,
            claims: 1,
            queued_at: 100 + n,
          });
        await set(ids[3]!, { priority: 0 });
        await set(ids[8]!, { status: 'waiting', run_at: now - 10, queued_at: 50 });
        await set(ids[9]!, { status: 'waiting', run_at: now - 10, queued_at: 200, priority: 0 });
        await set(ids[10]!, { queued_at: 10, priority: 0 });
        const first = await turns.finishAndClaim('r2', { runs: [], finishes: [] }, now, 60_000, 4);
        assert.deepEqual(
          first.claimed.map((e) => ids.indexOf(e.id)),
          [3, 9, 8, 0],
          'resumed first, by priority and then age; the queue (10, high priority) after them',
        );
        const rest = await turns.finishAndClaim('r2', { runs: [], finishes: [] }, now, 60_000, 100);
        assert.deepEqual(
          rest.claimed.map((e) => ids.indexOf(e.id)),
          [1, 2, 4, 5, 6, 7, 10, 11],
        );
        assert.ok(rest.claimed.every((e) => e.status === 'running'));
      }
    });

    it('turns through the pool look for expired leases once a second while none are found, and at every turn while some are', async () => {
      const turns = thread ? new ExecutionsRepository(server.storage.db) : repo;
      const late = await pipelineOf('Expires later', { concurrency: { mode: 'parallel', max: 1000 } });
      const t0 = Date.now();
      const claimAt = async (now: number) =>
        (await turns.finishAndClaim('r3', { runs: [], finishes: [] }, now, 60_000, 1000)).claimed
          .filter((e) => e.pipelineId === late.id)
          .map((e) => (e.input as { value: number }).value);
      // Takes whatever is left (none of it expired): this look found none.
      await claimAt(t0);
      const [a, b] = await turns.enqueueMany([400, 401].map((n) => ({ ...input(n), pipeline: late })));
      for (const id of [a!, b!])
        await server.storage.db
          .updateTable('engine_executions')
          .set({ status: 'running', locked_by: 'gone', lease_until: t0 - 5, claims: 1 })
          .where('id', '=', id)
          .execute();
      assert.deepEqual(await claimAt(t0 + 10), [], 'not looked for within the second');
      const found = await turns.finishAndClaim('r3', { runs: [], finishes: [] }, t0 + 1000, 60_000, 1);
      assert.deepEqual(
        found.claimed.map((e) => e.id),
        [a],
        'looked for a second after the last look',
      );
      assert.deepEqual(await claimAt(t0 + 1001), [401], 'the last look found some: looked for at once');
    });

    it('an idempotency key stores one execution; executions without one are not held by its unique index (PostgreSQL)', async () => {
      const keyed = await pipelineOf('Keyed', { concurrency: { mode: 'parallel', max: 10 } });
      const once = { ...input(300), pipeline: keyed, idempotencyKey: `key-${dialect}` };
      assert.ok(await repo.enqueue(once));
      assert.equal(await repo.enqueue({ ...once, input: { value: 301 } }), undefined);
      await repo.enqueueMany([input(302), input(303)].map((e) => ({ ...e, pipeline: keyed })));
      assert.deepEqual(await statuses(keyed.id), { 300: 'queued', 302: 'queued', 303: 'queued' });
      if (dialect !== 'postgres') return;
      const { rows } = await sql<{ indexdef: string }>`select indexdef from pg_indexes
        where tablename = 'engine_executions' and indexdef like '%(idempotency_key)%'`.execute(
        server.storage.db,
      );
      assert.deepEqual(
        rows.map((r) => r.indexdef.replace(/^.* USING /, '')),
        ['btree (idempotency_key) WHERE (idempotency_key IS NOT NULL)'],
      );
    });
  });
}
