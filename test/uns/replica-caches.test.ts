import assert from 'node:assert/strict';
import { randomBytes, randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/app.js';
import { createLocalInvalidationBus } from '../../src/platform/invalidation-bus.js';
import { openStorage, type Storage } from '../../src/storage/database.js';
import { testDialects } from '../helpers/dialects.js';
import { freePort } from '../helpers/free-port.js';
import { TestClient } from '../helpers/http-client.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';
import { eventually } from '../replicas/replica-cluster.js';
import { createPat } from './uns-helpers.js';

const PUBLISH = '/api/v1/uns/data/publish';

/**
 * Two apps on one database with one invalidation bus, as two replicas are (test/replicas runs real
 * processes over PostgreSQL LISTEN/NOTIFY): what one changes, the other's caches drop at once. Each
 * `it` first makes replica B cache the state, then changes it through replica A.
 */
for (const dialect of testDialects()) {
  describe(`UNS caches follow changes made on another replica [${dialect}]`, () => {
    const bus = createLocalInvalidationBus();
    let server: TestServer;
    let replicaB: { app: FastifyInstance; storage: Storage };
    let a: TestClient;
    let b: TestClient;
    let adminB: TestClient;

    before(async () => {
      const mqttNamespace = `meridian-test-${randomBytes(4).toString('hex')}`;
      server = await startTestServer(dialect, { bus, config: { mqttNamespace } });
      const storage = openStorage({
        databaseUrl: server.config.databaseUrl,
        dataDir: server.config.dataDir,
        poolSize: 5,
      });
      const port = await freePort();
      const app = await buildApp({ config: { ...server.config, httpPort: port }, storage, bus });
      await app.listen({ host: '127.0.0.1', port });
      replicaB = { app, storage };
      const token = await createPat(server.admin, ['uns:publish', 'uns:read', 'uns:write']);
      a = server.client.as({ token, org: server.orgId });
      b = new TestClient(`http://127.0.0.1:${port}`).as({ token, org: server.orgId });
      adminB = new TestClient(`http://127.0.0.1:${port}`).as({
        token: await createPat(server.admin, ['system:admin', 'uns:read']),
        org: server.orgId,
      });
    });
    after(async () => {
      await replicaB?.app.close();
      await replicaB?.storage.close();
      await server?.close();
    });

    const createStrictSchema = async (name: string, filter: string) => {
      const schema = await a.post('/api/v1/uns/topics/schemas', {
        name,
        definition: { jsonSchema: { type: 'number' }, minimum: 0, maximum: 10 },
      });
      assert.equal(schema.status, 201, schema.text);
      const binding = await a.post('/api/v1/uns/topics/schema-bindings', {
        filter,
        schema: name,
        mode: 'strict',
      });
      assert.equal(binding.status, 201, binding.text);
      return binding.body.data.id as string;
    };

    it('evaluates the very next publish with a binding just created, on the same replica', async () => {
      assert.equal((await a.post(PUBLISH, { topic: 'v1/same/l1/level', value: 11 })).status, 200);
      await createStrictSchema('same-level', 'v1/same/#');
      const refused = await a.post(PUBLISH, { topic: 'v1/same/l1/level', value: 11 });
      assert.equal(refused.status, 400, refused.text);
      assert.match(refused.body.message, /strict/);
    });

    it('evaluates the very next publish on replica B with a binding created on replica A, and without it once deleted', async () => {
      // B has read (and cached) the organization's bindings: the publish is accepted.
      assert.equal((await b.post(PUBLISH, { topic: 'v1/other/l1/level', value: 11 })).status, 200);
      const bindingId = await createStrictSchema('other-level', 'v1/other/#');
      const refused = await b.post(PUBLISH, { topic: 'v1/other/l1/level', value: 11 });
      assert.equal(refused.status, 400, refused.text);
      assert.match(refused.body.message, /strict/);
      assert.equal((await a.delete(`/api/v1/uns/topics/schema-bindings/${bindingId}`)).status, 204);
      assert.equal((await b.post(PUBLISH, { topic: 'v1/other/l1/level', value: 11 })).status, 200);
    });

    it('writes a value published on replica B into a topic that replica A deleted, under the topic created anew', async () => {
      const topic = 'v1/deleted/l1/speed';
      // B caches the topic's id.
      const first = await b.post(PUBLISH, { topic, value: 1 });
      assert.equal(first.status, 200, first.text);
      const deleted = await a.delete('/api/v1/uns/topics/v1/deleted?recursive=true');
      assert.equal(deleted.status, 200, deleted.text);
      assert.equal((await a.get(`/api/v1/uns/topics/${topic}`)).status, 404);
      const again = await b.post(PUBLISH, { topic, value: 2 });
      assert.equal(again.status, 200, again.text);
      const view = await a.get(`/api/v1/uns/topics/${topic}`);
      assert.equal(view.status, 200, 'the node exists again');
      assert.equal(view.body.data.latest?.value, 2);
      const orphans = await server.storage.db
        .selectFrom('uns_latest')
        .select('topic_id')
        .where('topic_id', 'not in', (eb) => eb.selectFrom('uns_topics').select('id'))
        .execute();
      assert.deepEqual(orphans, [], 'no latest value of a deleted node');
    });

    it('shows on replica B a retention changed on replica A', async () => {
      assert.equal((await adminB.get('/api/v1/system/uns/settings')).body.data.retentionDays, 0);
      const put = await server.admin.put('/api/v1/system/uns/settings', { retentionDays: 45 });
      assert.equal(put.status, 200, put.text);
      await eventually(async () => {
        assert.equal((await adminB.get('/api/v1/system/uns/settings')).body.data.retentionDays, 45);
      });
      assert.equal(replicaB.app.uns.settings.retentionDays(), 45, 'the hourly retention run uses it');
    });

    it('applies on replica B a broker changed on replica A, and leaves the retention as it is', async () => {
      assert.equal((await adminB.get('/api/v1/uns/broker')).body.data.mode, 'disabled');
      const put = await server.admin.put('/api/v1/system/uns/settings', {
        broker: { mode: 'external', mqttUrl: 'mqtt://127.0.0.1:1883' },
      });
      assert.equal(put.status, 200, put.text);
      await eventually(async () => {
        const status = (await adminB.get('/api/v1/uns/broker')).body.data;
        assert.equal(status.mode, 'external');
        assert.equal(status.state, 'connected');
        const settings = (await adminB.get('/api/v1/system/uns/settings')).body.data;
        assert.deepEqual(settings.broker, {
          mode: 'external',
          mqttPort: 0,
          mqttUrl: 'mqtt://127.0.0.1:1883',
        });
        assert.equal(settings.retentionDays, 45);
      }, 3000);
      assert.equal(
        (await server.admin.put('/api/v1/system/uns/settings', { broker: { mode: 'disabled' } })).status,
        200,
      );
      await eventually(async () => {
        const status = (await adminB.get('/api/v1/uns/broker')).body.data;
        assert.equal(status.mode, 'disabled');
        assert.equal(status.state, 'stopped');
      });
    });

    it('after a gap on the bus ("*": announcements may be lost) rereads bindings and settings', async () => {
      const topic = 'v1/gap/l1/level';
      assert.equal((await b.post(PUBLISH, { topic, value: 11 })).status, 200);
      const gone = 'v1/gapdel/l1/speed';
      assert.equal((await b.post(PUBLISH, { topic: gone, value: 1 })).status, 200, 'B caches its id');
      // Changes whose announcements were lost: written to the database directly.
      const schema = await server.storage.db
        .selectFrom('uns_schemas')
        .select('id')
        .where('name', '=', 'same-level')
        .executeTakeFirstOrThrow();
      await server.storage.db
        .insertInto('uns_schema_bindings')
        .values({
          id: randomUUID(),
          organization_id: server.orgId,
          filter: 'v1/gap/#',
          schema_id: schema.id,
          mode: 'strict',
          created_at: Date.now(),
          created_by: null,
        })
        .execute();
      await server.storage.db
        .updateTable('uns_settings')
        .set({ retention_days: 12 })
        .where('id', '=', 1)
        .execute();
      assert.equal(
        (await b.post(PUBLISH, { topic, value: 11 })).status,
        200,
        'the cached bindings still hold',
      );
      await server.storage.db
        .deleteFrom('uns_topics')
        .where('organization_id', '=', server.orgId)
        .where('path', 'like', 'v1/gapdel%')
        .execute();
      await bus.publish({ topic: '*' });
      const refused = await b.post(PUBLISH, { topic, value: 11 });
      assert.equal(refused.status, 400, refused.text);
      assert.equal((await b.post(PUBLISH, { topic: gone, value: 2 })).status, 200);
      const view = await a.get(`/api/v1/uns/topics/${gone}`);
      assert.equal(view.status, 200, 'the deleted node is created anew, not written under its old id');
      assert.equal(view.body.data.latest?.value, 2);
      await eventually(async () => {
        assert.equal((await adminB.get('/api/v1/system/uns/settings')).body.data.retentionDays, 12);
      });
    });
  });
}
