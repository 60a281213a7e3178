import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { testDialects } from '../helpers/dialects.js';
import type { TestClient } from '../helpers/http-client.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';
import { createPat, unsCounts } from './uns-helpers.js';

const PUBLISH = '/api/v1/uns/data/publish';

for (const dialect of testDialects()) {
  describe(`UNS schemas and quality [${dialect}]`, () => {
    let server: TestServer;
    let api: TestClient;
    const latest = async (topic: string) =>
      (await api.get(`/api/v1/uns/data/latest?topic=${topic}`)).body.data;

    before(async () => {
      server = await startTestServer(dialect);
      const token = await createPat(server.admin, ['uns:publish', 'uns:read', 'uns:write']);
      api = server.client.as({ token, org: server.orgId });
      const schema = await api.post('/api/v1/uns/topics/schemas', {
        name: 'temperature',
        definition: {
          jsonSchema: { type: 'number' },
          unit: '°C',
          minimum: -20,
          maximum: 120,
          staleAfterMs: 60_000,
        },
      });
      assert.equal(schema.status, 201, schema.text);
      const bind = await api.post('/api/v1/uns/topics/schema-bindings', {
        filter: 'v1/plant/+/temp',
        schema: 'temperature',
      });
      assert.equal(bind.status, 201, bind.text);
      await api.post('/api/v1/uns/topics/schemas', {
        name: 'strict-level',
        definition: { jsonSchema: { type: 'integer' }, minimum: 0, maximum: 10 },
      });
      await api.post('/api/v1/uns/topics/schema-bindings', {
        filter: 'v1/tank/#',
        schema: 'strict-level',
        mode: 'strict',
      });
    });
    after(() => server?.close());

    it('refuses a schema definition with a bad field, naming it', async () => {
      const res = await api.post('/api/v1/uns/topics/schemas', {
        name: 'bad',
        definition: { minimum: 5, maximum: 1 },
      });
      assert.equal(res.status, 400);
      assert.match(res.body.message, /minimum/);
    });

    it('versions schemas', async () => {
      const res = await api.post('/api/v1/uns/topics/schemas/temperature/versions', {
        definition: { jsonSchema: { type: 'number' }, minimum: -40, maximum: 150 },
      });
      assert.equal(res.status, 201);
      assert.equal(res.body.data.version, 2);
      const versions = await api.get('/api/v1/uns/topics/schemas/temperature');
      assert.deepEqual(
        versions.body.data.map((v: { version: number }) => v.version),
        [2, 1],
      );
    });

    it('stores a value within the schema with the published quality', async () => {
      assert.equal((await api.post(PUBLISH, { topic: 'v1/plant/l1/temp', value: 50 })).status, 200);
      assert.equal((await latest('v1/plant/l1/temp')).quality, 0);
      assert.equal(
        (await api.post(PUBLISH, { topic: 'v1/plant/l1/temp', value: 51, quality: 2 })).status,
        200,
      );
      assert.equal((await latest('v1/plant/l1/temp')).quality, 2);
    });

    it('refuses a value of the wrong type (400, nothing stored)', async () => {
      const before = await unsCounts(server);
      const res = await api.post(PUBLISH, { topic: 'v1/plant/l2/temp', value: 'hot' });
      assert.equal(res.status, 400);
      assert.match(res.body.message, /^value/);
      assert.deepEqual(await unsCounts(server), before);
    });

    it('stores an out-of-range value with quality at least 1 and a violation record', async () => {
      const res = await api.post(PUBLISH, { topic: 'v1/plant/l3/temp', value: 500 });
      assert.equal(res.status, 200);
      assert.equal((await latest('v1/plant/l3/temp')).quality, 1);
      const violations = await api.get('/api/v1/uns/topics/violations?topic=v1/plant/l3/temp');
      assert.equal(violations.status, 200);
      assert.equal(violations.body.data.length, 1);
      assert.equal(violations.body.data[0].kind, 'range');
    });

    it('never raises a published quality: bad stays bad when out of range', async () => {
      await api.post(PUBLISH, { topic: 'v1/plant/l4/temp', value: 500, quality: 2 });
      assert.equal((await latest('v1/plant/l4/temp')).quality, 2);
    });

    it('stores a stale value with quality at least 1 and shows staleness in the topic view', async () => {
      const old = new Date(Date.now() - 3_600_000).toISOString();
      assert.equal(
        (await api.post(PUBLISH, { topic: 'v1/plant/l5/temp', value: 20, timestamp: old })).status,
        200,
      );
      assert.equal((await latest('v1/plant/l5/temp')).quality, 1);
      const view = await api.get('/api/v1/uns/topics/v1/plant/l5/temp');
      assert.equal(view.body.data.stale, true);
      assert.equal(view.body.data.schemaBinding.schema.name, 'temperature');
    });

    it('refuses any violation under a strict binding, nothing stored', async () => {
      const before = await unsCounts(server);
      const res = await api.post(PUBLISH, { topic: 'v1/tank/t1/level', value: 11 });
      assert.equal(res.status, 400);
      assert.match(res.body.message, /strict/);
      assert.deepEqual(await unsCounts(server), before);
      assert.equal((await api.post(PUBLISH, { topic: 'v1/tank/t1/level', value: 7 })).status, 200);
    });

    it('refuses a batch with a strict violation as a whole, naming the record', async () => {
      const before = await unsCounts(server);
      const res = await api.post(`${PUBLISH}/batch`, {
        records: [
          { topic: 'v1/tank/t2/level', value: 1 },
          { topic: 'v1/tank/t2/level', value: 1.5, timestamp: '2026-01-01T00:00:00Z' },
        ],
      });
      assert.equal(res.status, 400);
      assert.equal(res.body.errors[0].field, 'records[1].value');
      assert.deepEqual(await unsCounts(server), before);
    });

    it('lists bindings and removes one', async () => {
      const list = await api.get('/api/v1/uns/topics/schema-bindings');
      const tank = list.body.data.find((b: { filter: string }) => b.filter === 'v1/tank/#');
      assert.equal(tank.mode, 'strict');
      assert.equal((await api.delete(`/api/v1/uns/topics/schema-bindings/${tank.id}`)).status, 204);
      assert.equal((await api.post(PUBLISH, { topic: 'v1/tank/t1/level', value: 11 })).status, 200);
    });
  });
}
