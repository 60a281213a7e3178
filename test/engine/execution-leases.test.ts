import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { ExecutionsRepository } from '../../src/modules/engine/queue/executions.repository.js';
import { ExecutionEngine } from '../../src/modules/engine/runtime/engine.js';
import { Sandbox } from '../../src/modules/engine/sandbox/sandbox.js';
import { testDialects } from '../helpers/dialects.js';
import type { TestClient } from '../helpers/http-client.js';
import type { TestServer } from '../helpers/test-server.js';
import { waitUntil } from '../helpers/wait.js';
import { allNodeRuns, createPipelineRow, manual, serverWithoutEngine } from './engine-helpers.js';

/**
 * An engine renews the leases of the executions it runs, all in one statement every third of a lease;
 * an execution whose lease is no longer its own (another replica took it over) stops at its next node
 * and records nothing more. A short lease (300 ms) and an engine of the test's own make it quick.
 */
const LEASE_MS = 300;

for (const dialect of testDialects()) {
  describe(`Execution leases [${dialect}]`, () => {
    let server: TestServer;
    let api: TestClient;
    let repo: ExecutionsRepository;
    let sandbox: Sandbox;
    let engine: ExecutionEngine;

    before(async () => {
      // Only the test's engine claims.
      ({ server, api, repo } = await serverWithoutEngine(dialect));
      sandbox = new Sandbox();
      engine = new ExecutionEngine({
        repo,
        sandbox,
        clock: { now: () => Date.now() },
        log: server.app.log,
        publish: async () => {},
        leaseMs: LEASE_MS,
        pollMs: 50,
      });
      engine.start();
    });
    after(async () => {
      await engine?.stop();
      await sandbox?.close();
      await server?.close();
    });

    /** A pipeline that waits `seconds` in place, then sets a value; queued by the test's repository. */
    const queueWaiting = async (name: string, seconds: number) => {
      const pipeline = await createPipelineRow(api, server.orgId, {
        name,
        settings: { historyDetail: 'standard' },
        nodes: [
          manual,
          { id: 'wait', name: 'Wait', type: 'flow.wait', parameters: { seconds } },
          { id: 'after', name: 'After', type: 'transform.set', parameters: { fields: { done: true } } },
        ],
        edges: [
          { source: 'start', target: 'wait' },
          { source: 'wait', target: 'after' },
        ],
      });
      const now = Date.now();
      const queued = await repo.enqueue({
        organizationId: server.orgId,
        pipeline,
        trigger: { type: 'manual', nodeId: 'start', firedAt: now, source: {} },
        input: null,
        now,
      });
      engine.wake();
      return queued.id;
    };
    const until = (what: string, check: () => Promise<boolean>, timeoutMs: number) =>
      waitUntil(what, async () => ((await check()) ? true : null), timeoutMs);
    const row = (id: string) =>
      server.storage.db
        .selectFrom('engine_executions')
        .select(['status', 'locked_by', 'lease_until', 'started_at'])
        .where('id', '=', id)
        .executeTakeFirstOrThrow();

    it('an execution running longer than its lease keeps it: renewed while it runs, then finished', async () => {
      const id = await queueWaiting('Renewed', 0.9);
      await until('it runs', async () => (await row(id)).status === 'running', 5000);
      const claimed = await row(id);
      assert.equal(claimed.locked_by, engine.replica);
      const firstLease = Number(claimed.lease_until);
      await until('the lease is renewed', async () => Number((await row(id)).lease_until) > firstLease, 2000);
      const renewed = await row(id);
      assert.equal(renewed.status, 'running');
      assert.equal(renewed.locked_by, engine.replica, 'still ours');
      await until('it completes', async () => (await row(id)).status === 'completed', 5000);
      const runs = await allNodeRuns(api, id);
      assert.equal(runs.find((r) => r.nodeId === 'after')?.status, 'succeeded');
    });

    it('an execution whose lease another replica took stops at its next node and records no end', async () => {
      const id = await queueWaiting('Taken over', 0.8);
      await until('it runs', async () => (await row(id)).status === 'running', 5000);
      // Another replica takes it over (as after this one's lease expired).
      const leaseEnd = Date.now() + 60_000;
      await server.storage.db
        .updateTable('engine_executions')
        .set({ locked_by: 'replica-x', lease_until: leaseEnd })
        .where('id', '=', id)
        .execute();
      // The wait ends, and the run would go on to `after`: it does not.
      await new Promise((resolve) => setTimeout(resolve, 1500));
      const taken = await row(id);
      assert.equal(taken.status, 'running', 'the other replica holds it');
      assert.equal(taken.locked_by, 'replica-x');
      assert.equal(Number(taken.lease_until), leaseEnd, 'this engine did not renew a lease it lost');
      const runs = await allNodeRuns(api, id);
      assert.equal(
        runs.some((r) => r.nodeId === 'after'),
        false,
        'the node after the lease was lost did not run',
      );
    });

    it('renewLeases extends only the leases the replica holds, in one statement, and answers those', async () => {
      const mine = await queueWaiting('Mine', 0.6);
      await until('it runs', async () => (await row(mine)).status === 'running', 5000);
      const leaseEnd = Date.now() + 120_000;
      const renewed = await repo.renewLeases([mine, 'no-such-execution'], engine.replica, leaseEnd);
      assert.deepEqual([...renewed], [mine]);
      assert.equal(Number((await row(mine)).lease_until), leaseEnd);
      assert.deepEqual([...(await repo.renewLeases([mine], 'replica-y', leaseEnd + 1))], [], 'not its lease');
      assert.equal(Number((await row(mine)).lease_until), leaseEnd, 'unchanged by another replica');
      assert.deepEqual([...(await repo.renewLeases([], engine.replica, leaseEnd))], []);
      await until('it completes', async () => (await row(mine)).status === 'completed', 5000);
    });
  });
}
