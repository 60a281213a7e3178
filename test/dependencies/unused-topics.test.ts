import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { testDialects } from '../helpers/dialects.js';
import { buildOrganization } from '../helpers/factories.js';
import type { TestClient } from '../helpers/http-client.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';
import { GRAPH } from './graph-fixture.js';

const PUBLISH = '/api/v1/uns/data/publish';
const DAY_US = 86_400_000_000;

for (const dialect of testDialects()) {
  describe(`Dependency graph: unused topics [${dialect}]`, () => {
    let server: TestServer;
    let api: TestClient;

    before(async () => {
      server = await startTestServer(dialect);
      api = server.admin;
    });
    after(() => server?.close());

    /** Publishes a value, then (for `ageDays`) moves its receipt time back that many days. */
    async function topicWithValue(client: TestClient, organizationId: string, topic: string, ageDays = 0) {
      const res = await client.post(PUBLISH, { topic, value: 1 });
      assert.equal(res.status, 200, res.text);
      const row = await server.storage.db
        .selectFrom('uns_topics')
        .select('id')
        .where('organization_id', '=', organizationId)
        .where('path', '=', topic)
        .executeTakeFirstOrThrow();
      for (let i = 0; i < 50; i++) {
        const latest = await server.storage.db
          .selectFrom('uns_latest')
          .select('received_us')
          .where('topic_id', '=', row.id)
          .executeTakeFirst();
        if (latest) break;
        await new Promise((r) => setTimeout(r, 20));
      }
      if (ageDays > 0)
        await server.storage.db
          .updateTable('uns_latest')
          .set({ received_us: Date.now() * 1000 - ageDays * DAY_US })
          .where('topic_id', '=', row.id)
          .execute();
    }

    const unused = async (client: TestClient, query = '') => {
      const res = await client.get(`${GRAPH}/orphans${query}`);
      assert.equal(res.status, 200, res.text);
      return res.body.data as { entity: { key: string; type: string }; reason: string }[];
    };

    it('lists an old topic nobody uses, with a reason; not one a dashboard reads, nor one with a recent value', async () => {
      await topicWithValue(api, server.orgId, 'v1/quiet/lonely/level', 40);
      await topicWithValue(api, server.orgId, 'v1/quiet/shown/level', 40);
      await topicWithValue(api, server.orgId, 'v1/quiet/exact/level', 40);
      await topicWithValue(api, server.orgId, 'v1/quiet/fresh/level', 0);
      const dashboard = await api.post('/api/v1/uns/dashboards', {
        title: 'Quiet line',
        panels: [
          {
            id: 'levels',
            type: 'timeseries',
            gridPos: { x: 0, y: 0, w: 12, h: 8 },
            queries: [{ filter: 'v1/quiet/shown/+' }, { filter: 'v1/quiet/exact/level' }],
          },
        ],
      });
      assert.equal(dashboard.status, 201, dashboard.text);

      const all = await unused(api);
      const topics = all.filter((o) => o.entity.type === 'topic');
      const keys = topics.map((o) => o.entity.key);
      assert.ok(keys.includes('topic:v1/quiet/lonely/level'), JSON.stringify(keys));
      assert.match(
        topics.find((o) => o.entity.key === 'topic:v1/quiet/lonely/level')!.reason,
        /nothing reads it, publishes to it or binds it to a model, and it received no value in the last 30 days/,
      );
      assert.ok(!keys.includes('topic:v1/quiet/shown/level'), 'a dashboard filter matches it');
      assert.ok(!keys.includes('topic:v1/quiet/exact/level'), 'a dashboard reads it by name');
      assert.ok(!keys.includes('topic:v1/quiet/fresh/level'), 'it received a value today');
      assert.ok(!keys.includes('topic:v1/quiet/lonely'), 'a node with topics below it is not a stream');

      // A longer window makes the old topic recent; types narrows the list to topics.
      assert.ok(
        !(await unused(api, '?quietDays=60')).some((o) => o.entity.key === 'topic:v1/quiet/lonely/level'),
      );
      const onlyTopics = await unused(api, '?types=topic');
      assert.ok(onlyTopics.length > 0 && onlyTopics.every((o) => o.entity.type === 'topic'));
    });

    it('a topic a pipeline publishes to is not unused', async () => {
      await topicWithValue(api, server.orgId, 'v1/quiet/published/level', 40);
      const pipeline = await api.post('/api/v1/engine/pipelines', {
        name: 'Quiet publisher',
        nodes: [
          { id: 'start', name: 'Start', type: 'trigger.manual', parameters: {} },
          {
            id: 'pub',
            name: 'Publish',
            type: 'uns.publish',
            parameters: { topic: 'v1/quiet/published/level' },
          },
        ],
        edges: [{ source: 'start', target: 'pub' }],
      });
      assert.equal(pipeline.status, 201, pipeline.text);
      assert.ok(
        !(await unused(api, '?types=topic')).some((o) => o.entity.key === 'topic:v1/quiet/published/level'),
      );
    });

    it("never lists another organization's topics", async () => {
      const other = await buildOrganization(server, 'Quiet elsewhere');
      const elsewhere = api.inOrg(other);
      await topicWithValue(elsewhere, other, 'v1/quiet/theirs/level', 40);
      const ours = (await unused(api, '?types=topic')).map((o) => o.entity.key);
      assert.ok(!ours.includes('topic:v1/quiet/theirs/level'));
      const theirs = (await unused(elsewhere, '?types=topic')).map((o) => o.entity.key);
      assert.deepEqual(theirs, ['topic:v1/quiet/theirs/level']);
    });

    it('answers a bad window with 400', async () => {
      for (const q of ['?quietDays=0', '?quietDays=3651', '?quietDays=soon', '?quietDays=1.5']) {
        const res = await api.get(`${GRAPH}/orphans${q}`);
        assert.equal(res.status, 400, `${q}: ${res.text}`);
        assert.equal(res.body.error, 'bad_request');
      }
    });
  });
}
