import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ExecutionsRepository } from '../../src/modules/engine/queue/executions.repository.js';
import { ValueTriggers } from '../../src/modules/engine/triggers/value-triggers.js';
import type { CommitJob } from '../../src/modules/uns/historian/historian-writer.js';
import { parsePublishRecord } from '../../src/modules/uns/publishing/publish-record.js';
import { systemClock } from '../../src/platform/clock.js';
import { testDialects } from '../helpers/dialects.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';
import { waitUntil } from '../helpers/wait.js';

const PIPELINES = '/api/v1/engine/pipelines';
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const echo = { id: 'echo', name: 'Echo', type: 'transform.jsonata', parameters: { expression: '$' } };

/**
 * The catch-up of a replica that hears of a trigger change after it committed values (issue 45): a
 * second ValueTriggers on the server's database stands for another replica, told of its commits as the
 * UNS publish path tells it, and of the change only when it refreshes. Each value committed since the
 * pipeline's version was saved starts one execution, whether the live listener or the catch-up sees it.
 */
for (const dialect of testDialects()) {
  describe(`Value triggers catch up on a replica that heard late [${dialect}]`, () => {
    let server: TestServer;
    let replica: ValueTriggers;

    const commit = (topic: string, value: number): CommitJob => ({
      organizationId: server.orgId,
      receivedUs: Date.now() * 1000,
      records: [
        {
          record: parsePublishRecord({ topic, value }, { prefix: 'v1', now: () => Date.now() }),
          quality: 0,
          violations: [],
        },
      ],
    });
    const topicsRun = async (pipelineId: string) =>
      (
        await server.storage.db
          .selectFrom('engine_executions')
          .select('input')
          .where('pipeline_id', '=', pipelineId)
          .execute()
      )
        .map((r) => JSON.parse(r.input!).topic as string)
        .sort();

    before(async () => {
      server = await startTestServer(dialect);
      const executions = new ExecutionsRepository(server.storage.db);
      replica = new ValueTriggers({
        db: server.storage.db,
        clock: systemClock,
        log: server.app.log,
        topicPrefix: 'v1',
        enqueue: async (inputs) => void (await executions.enqueueMany(inputs)),
      });
      await replica.refresh();
    });
    after(() => server?.close());

    it('an enable heard late: the values committed since the enable run once, those before it never', async () => {
      const made = await server.admin.post(PIPELINES, {
        name: 'Heard late',
        nodes: [{ id: 'in', name: 'In', type: 'trigger.uns', parameters: { filter: 'v1/late/#' } }, echo],
        edges: [{ source: 'in', target: 'echo' }],
      });
      assert.equal(made.status, 201, made.text);
      const id = made.body.data.id as string;
      await replica.refresh();
      assert.equal(replica.committed(commit('v1/late/before', 0)), undefined, 'disabled: not listened for');
      await sleep(5);
      assert.equal((await server.admin.post(`${PIPELINES}/${id}/enable`)).status, 200);
      await sleep(5);
      // Committed here before this replica heard of the enable: no listener yet.
      assert.equal(replica.committed(commit('v1/late/a', 1)), undefined);
      assert.equal(replica.committed(commit('v1/late/b', 2)), undefined);
      await replica.refresh();
      const live = replica.committed(commit('v1/late/c', 3));
      assert.ok(live, 'live from the refresh on');
      await live;
      await replica.refresh();
      await waitUntil(
        'three executions',
        async () => ((await topicsRun(id)).length >= 3 ? true : undefined),
        5000,
      );
      await sleep(200);
      assert.deepEqual(await topicsRun(id), ['v1/late/a', 'v1/late/b', 'v1/late/c']);
    });

    it('an edit heard late: values the old filter matched are not run again, those only the new one matches are caught up', async () => {
      const made = await server.admin.post(PIPELINES, {
        name: 'Filter widened',
        enabled: true,
        nodes: [{ id: 'in', name: 'In', type: 'trigger.uns', parameters: { filter: 'v1/wide/a/#' } }, echo],
        edges: [{ source: 'in', target: 'echo' }],
      });
      assert.equal(made.status, 201, made.text);
      const id = made.body.data.id as string;
      await replica.refresh();
      const current = (await server.admin.get(`${PIPELINES}/${id}`)).body.data;
      await sleep(5);
      const widened = await server.admin.put(`${PIPELINES}/${id}`, {
        name: current.name,
        enabled: true,
        nodes: [{ id: 'in', name: 'In', type: 'trigger.uns', parameters: { filter: 'v1/wide/#' } }, echo],
        edges: current.edges,
        version: current.version,
      });
      assert.equal(widened.status, 200, widened.text);
      await sleep(5);
      // The old listener still runs here: it matches a, not b.
      const old = replica.committed(commit('v1/wide/a/x', 1));
      assert.ok(old);
      await old;
      assert.equal(replica.committed(commit('v1/wide/b/x', 2)), undefined);
      await replica.refresh();
      await waitUntil(
        'two executions',
        async () => ((await topicsRun(id)).length >= 2 ? true : undefined),
        5000,
      );
      await sleep(200);
      assert.deepEqual(await topicsRun(id), ['v1/wide/a/x', 'v1/wide/b/x']);
    });
  });
}
