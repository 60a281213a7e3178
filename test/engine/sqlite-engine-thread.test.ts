import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { CLAIMED_COLUMNS } from '../../src/modules/engine/queue/execution-claims.js';
import { ExecutionsRepository } from '../../src/modules/engine/queue/executions.repository.js';
import {
  EXECUTION_COLUMNS,
  SqliteEngineThread,
} from '../../src/modules/engine/queue/sqlite-engine-thread.js';
import type { TestClient } from '../helpers/http-client.js';
import type { TestServer } from '../helpers/test-server.js';
import { createPipelineRow, manual, serverWithoutEngine } from './engine-helpers.js';

/**
 * The SQLite engine's bookkeeping thread (its claims are tested with five replicas in claim-limits.test.ts):
 * what arrives while two messages are in flight goes in one transaction, and is stored whole or not at all.
 */
describe('The engine bookkeeping thread [sqlite]', () => {
  let server: TestServer;
  let api: TestClient;
  let thread: SqliteEngineThread;
  let repo: ExecutionsRepository;

  before(async () => {
    ({ server, api } = await serverWithoutEngine('sqlite'));
    thread = new SqliteEngineThread(server.storage.location);
    repo = new ExecutionsRepository(server.storage.db, undefined, thread);
  });
  after(async () => {
    await thread?.close();
    await server?.close();
  });

  const stored = async (ids: string[]) =>
    (
      await server.storage.db.selectFrom('engine_executions').select('id').where('id', 'in', ids).execute()
    ).map((r) => r.id);

  it('stores a burst with its definition; bursts sent while two are in flight commit together, or not at all', async () => {
    const pipeline = await createPipelineRow(api, server.orgId, { name: 'Bursts', nodes: [manual] });
    const [first] = await repo.enqueueMany([
      {
        organizationId: server.orgId,
        pipeline,
        trigger: { type: 'manual', nodeId: 'start', firedAt: 1, source: {} },
        input: { n: 1 },
        now: Date.now(),
      },
    ]);
    const row = await server.storage.db
      .selectFrom('engine_executions')
      .selectAll()
      .where('id', '=', first!)
      .executeTakeFirstOrThrow();
    assert.equal(row.status, 'queued');
    assert.equal(row.input, '{"n":1}');
    const definition = await server.storage.db
      .selectFrom('engine_definitions')
      .select('definition')
      .where('pipeline_id', '=', pipeline.id)
      .executeTakeFirstOrThrow();
    assert.deepEqual(JSON.parse(definition.definition).nodes, pipeline.nodes);

    const values = (id: string) => EXECUTION_COLUMNS.map((c) => (c === 'id' ? id : row[c]));
    const burst = (id: string) => ({ definitions: [], executions: [values(id)] });
    const [a, b, c] = [randomUUID(), randomUUID(), randomUUID()];
    // Two go at once; the third (a row whose id is taken) and the fourth wait, and go together.
    const sent = [
      thread.enqueue(burst(a)),
      thread.enqueue(burst(b)),
      thread.enqueue(burst(first!)),
      thread.enqueue(burst(c)),
    ];
    const settled = await Promise.allSettled(sent);
    assert.deepEqual(
      settled.map((s) => s.status),
      ['fulfilled', 'fulfilled', 'rejected', 'rejected'],
    );
    const refused = settled[3] as PromiseRejectedResult;
    assert.match(String(refused.reason?.message), /UNIQUE constraint failed/);
    assert.deepEqual(
      (await stored([a, b, c])).sort(),
      [a, b].sort(),
      'the refused transaction stored nothing',
    );

    // The thread goes on after a refused transaction.
    const d = randomUUID();
    await thread.enqueue(burst(d));
    assert.deepEqual(await stored([d]), [d]);
  });

  it('claims answer the rows as stored: those it enqueued from memory, others and large ones read back; a cancelled one is not claimed', async () => {
    const pipeline = await createPipelineRow(api, server.orgId, {
      name: 'Claims',
      nodes: [manual],
      settings: { concurrency: { mode: 'parallel', max: 10 } },
    });
    const now = Date.now();
    const input = (n: number) => ({
      organizationId: server.orgId,
      pipeline,
      trigger: { type: 'manual' as const, nodeId: 'start', firedAt: now, source: { n } },
      input: { n, text: `é ${n}`, list: [n, null] },
      now: now + n,
    });
    // Through the thread: three remembered there, and one too large to keep (read back); one through
    // the event loop's connection (not remembered).
    const large = { ...input(5), input: { text: 'x'.repeat(70_000) } };
    const viaThread = await repo.enqueueMany([input(1), input(2), input(3), large]);
    const elsewhere = await new ExecutionsRepository(server.storage.db).enqueue(input(4));
    assert.ok(await repo.cancel(server.orgId, viaThread[1]!, now));

    const answer = await thread.turn({
      replica: 'r1',
      runs: [],
      finishes: [],
      now,
      leaseMs: 60_000,
      max: 10,
    });
    const claimed = answer.claimed.filter((row) => row.pipeline_id === pipeline.id);
    assert.deepEqual(
      claimed.map((row) => row.id),
      [viaThread[0], viaThread[2], elsewhere.id, viaThread[3]],
      'in queue order, without the cancelled one',
    );
    const rows = await server.storage.db
      .selectFrom('engine_executions')
      .select(CLAIMED_COLUMNS)
      .where(
        'id',
        'in',
        claimed.map((row) => row.id),
      )
      .execute();
    for (const row of claimed) {
      const { fromQueue, ...answered } = row;
      assert.equal(fromQueue, true);
      assert.deepEqual(
        answered,
        rows.find((r) => r.id === row.id),
      );
      assert.equal(answered.status, 'running');
      assert.equal(answered.locked_by, 'r1');
      assert.equal(answered.claims, 1);
      assert.equal(answered.started_at, now);
      assert.equal(answered.lease_until, now + 60_000);
    }
    // Claimed once: a second turn claims none of them again.
    const again = await thread.turn({ replica: 'r2', runs: [], finishes: [], now, leaseMs: 60_000, max: 10 });
    assert.equal(again.claimed.filter((row) => row.pipeline_id === pipeline.id).length, 0);
  });
});
