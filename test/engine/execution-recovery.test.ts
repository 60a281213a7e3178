import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { NODE_TYPES, type NodeType } from '../../src/modules/engine/nodes/node-types.js';
import type { PipelineRow } from '../../src/modules/engine/pipelines/pipelines.repository.js';
import { ExecutionsRepository } from '../../src/modules/engine/queue/executions.repository.js';
import { testDialects } from '../helpers/dialects.js';
import type { TestClient } from '../helpers/http-client.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';
import { createPat } from '../uns/uns-helpers.js';
import { createValid, EXECUTIONS, execute, executionIn, manual, PIPELINES } from './engine-helpers.js';

/**
 * A node type that writes to a device, registered for this suite only: its side effect is what the
 * engine's crash rule keys on; its "device" is a counter, so that a second write would show.
 */
const deviceWrites: unknown[] = [];
const deviceWrite: NodeType = {
  type: 'test.device-write',
  typeVersion: 1,
  category: 'flow',
  title: 'Device write (test)',
  description: 'Counts its writes.',
  parameters: { type: 'object', additionalProperties: false },
  inputs: ['in'],
  outputs: ['out'],
  sideEffect: 'writes-device',
  testable: false,
  expressionParameters: [],
  run: async (c) => {
    deviceWrites.push(c.input);
    if (c.input === 'no answer') throw new Error('the device did not answer');
    return { output: { written: c.input ?? null }, port: 'out' };
  },
};
if (!NODE_TYPES.some((t) => t.type === deviceWrite.type)) NODE_TYPES.push(deviceWrite);

for (const dialect of testDialects()) {
  describe(`Execution recovery and retention [${dialect}]`, () => {
    let server: TestServer;
    let api: TestClient;

    before(async () => {
      server = await startTestServer(dialect);
      const token = await createPat(server.admin, ['pipelines:read', 'pipelines:write']);
      api = server.client.as({ token, org: server.orgId });
    });
    after(() => server?.close());

    it('an execution interrupted in a device write is marked failed and never re-run by itself; a retry needs confirmWrites', async () => {
      const id = await createValid(api, {
        name: 'Writes a register',
        nodes: [
          manual,
          { id: 'write', name: 'Write', type: 'test.device-write', parameters: {} },
          { id: 'after', name: 'After', type: 'transform.jsonata', parameters: { expression: '$' } },
        ],
        edges: [
          { source: 'start', target: 'write' },
          { source: 'write', target: 'after' },
        ],
      });
      const pipeline = { ...(await api.get(`${PIPELINES}/${id}`)).body.data, organizationId: server.orgId };
      const repo = new ExecutionsRepository(server.storage.db);
      deviceWrites.length = 0;
      await server.app.engine.stop();
      let executionId: string;
      try {
        const queued = await repo.enqueue({
          organizationId: server.orgId,
          pipeline: pipeline as PipelineRow,
          trigger: { type: 'manual', nodeId: 'start', firedAt: Date.now(), source: {} },
          input: 42,
          now: Date.now(),
        });
        executionId = queued.id;
        // A replica claims it, starts the write (its run is stored as running first), and dies.
        assert.equal((await repo.claim('dead-replica', Date.now(), 300))?.id, queued.id);
        const run = {
          id: crypto.randomUUID(),
          executionId: queued.id,
          nodeId: 'write',
          nodeName: 'Write',
          type: 'test.device-write',
          runIndex: 0,
          status: 'running' as const,
          port: null,
          attempts: [],
          input: 42,
          output: null,
          error: null,
          startedAt: Date.now(),
          finishedAt: null,
          durationMs: null,
          iteration: null,
          iterationKey: null,
          sideEffect: 'writes-device',
        };
        await repo.saveNodeRun(run);
        // A copy of the run from before it was marked, stored later (as a bookkeeping turn would),
        // does not take the mark away.
        await repo.saveNodeRun({ ...run, status: 'succeeded', sideEffect: null, finishedAt: Date.now() });
        const stored = (await repo.nodeRuns(queued.id))[0]!;
        assert.equal(stored.sideEffect, 'writes-device');
        assert.equal(stored.status, 'running');
      } finally {
        server.app.engine.start();
      }
      const done = await executionIn(api, executionId);
      assert.equal(done.status, 'failed');
      assert.equal(done.reason, 'interrupted');
      assert.equal((done.error as { nodeId: string }).nodeId, 'write');
      assert.equal(deviceWrites.length, 0, 'the write was not run again');
      await new Promise((resolve) => setTimeout(resolve, 1500));
      assert.equal((await api.get(`${EXECUTIONS}/${executionId}`)).body.data.status, 'failed');
      assert.equal(deviceWrites.length, 0);
      const unconfirmed = await api.post(`${EXECUTIONS}/${executionId}/retry`, { mode: 'from-start' });
      assert.equal(unconfirmed.status, 400, unconfirmed.text);
      assert.equal(unconfirmed.body.path, '/confirmWrites');
      const confirmed = await api.post(`${EXECUTIONS}/${executionId}/retry`, {
        mode: 'from-start',
        confirmWrites: true,
      });
      assert.equal(confirmed.status, 201, confirmed.text);
      assert.equal((await executionIn(api, confirmed.body.data.id)).status, 'completed');
      assert.deepEqual(deviceWrites, [42]);
    });

    it('a failed device write is not tried again by the node retry settings: it may have reached the device', async () => {
      const id = await createValid(api, {
        name: 'Writes with retries',
        nodes: [
          manual,
          {
            id: 'write',
            name: 'Write',
            type: 'test.device-write',
            parameters: {},
            settings: { retry: { maxTries: 3, waitMs: 0, backoff: 'fixed' } },
          },
        ],
        edges: [{ source: 'start', target: 'write' }],
      });
      deviceWrites.length = 0;
      const done = await executionIn(api, await execute(api, id, 'no answer'));
      assert.equal(done.status, 'failed');
      assert.match((done.error as { message: string }).message, /not retried by itself/);
      assert.deepEqual(deviceWrites, ['no answer'], 'written once, not three times');
    });

    it("keeps executions per the organization's retention settings: days and most kept", async () => {
      const SETTINGS = '/api/v1/organizations/settings';
      const current = (await server.admin.get(SETTINGS)).body.data;
      const patched = await server.admin.patch(SETTINGS, {
        version: current.version,
        executions: { retentionDays: 2, maxCount: 100 },
      });
      assert.equal(patched.status, 200, patched.text);
      const repo = new ExecutionsRepository(server.storage.db);
      const pipeline = {
        ...(await api.get(`${PIPELINES}/${await createValid(api, { name: 'Kept', nodes: [manual] })}`)).body
          .data,
        organizationId: server.orgId,
      } as PipelineRow;
      const day = 86_400_000;
      const now = Date.now();
      const old = await repo.enqueue({
        organizationId: server.orgId,
        pipeline,
        trigger: { type: 'manual', nodeId: 'start', firedAt: now - 3 * day, source: {} },
        input: null,
        now: now - 3 * day,
        skippedBecause: 'maintenance',
      });
      const made: string[] = [];
      for (let i = 0; i < 110; i++)
        made.push(
          (
            await repo.enqueue({
              organizationId: server.orgId,
              pipeline,
              trigger: { type: 'manual', nodeId: 'start', firedAt: now + 1000 + i, source: {} },
              input: null,
              now: now + 1000 + i,
              skippedBecause: 'maintenance',
            })
          ).id,
        );
      assert.ok((await repo.purge(Date.now())) >= 11);
      assert.equal((await api.get(`${EXECUTIONS}/${old.id}`)).status, 404, 'older than 2 days');
      const kept = await api.get(`${EXECUTIONS}?limit=200`);
      assert.equal(kept.body.pagination.total, 100);
      const ids = new Set(kept.body.data.map((e: { id: string }) => e.id));
      assert.ok(
        made.slice(10).every((id) => ids.has(id)),
        'the newest 100 are kept',
      );
      assert.ok(
        made.slice(0, 10).every((id) => !ids.has(id)),
        'the oldest beyond 100 went',
      );
    });
  });
}
