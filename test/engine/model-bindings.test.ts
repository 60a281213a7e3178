import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import mqtt, { type MqttClient } from 'mqtt';
import { testDialects } from '../helpers/dialects.js';
import { freePort } from '../helpers/free-port.js';
import type { TestClient } from '../helpers/http-client.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';
import { createPat, unsCounts } from '../uns/uns-helpers.js';

const MODELS = '/api/v1/engine/models';
const PUBLISH = '/api/v1/uns/data/publish';
const PREFIX = 'v1/acme/plant1/pump41';

for (const dialect of testDialects()) {
  describe(`Model bindings to the UNS [${dialect}]`, () => {
    let server: TestServer;
    let api: TestClient;
    let token: string;
    let pumpId: string;
    let motorId: string;
    const clients: MqttClient[] = [];

    const latest = async (topic: string) =>
      (await api.get(`/api/v1/uns/data/latest?topic=${topic}`)).body.data;
    const violations = async (topic: string) =>
      (await api.get(`/api/v1/uns/topics/violations?topic=${topic}`)).body.data as {
        kind: string;
        message: string;
      }[];
    const bindingsOf = async () =>
      (await api.get('/api/v1/uns/topics/schema-bindings')).body.data as {
        filter: string;
        mode: string;
        schema: { name: string; version: number };
      }[];
    const openMqtt = async () => {
      const client = await mqtt.connectAsync(`mqtt://127.0.0.1:${server.config.mqttPort}`, {
        username: server.orgId,
        password: token,
        reconnectPeriod: 0,
      });
      client.on('error', () => {});
      clients.push(client);
      return client;
    };
    const pumpFields = (motor: string) => [
      { name: 'pressure', type: 'number', unit: 'kPa', constraints: { min: 0, max: 1000 } },
      { name: 'state', type: 'enum', enum: ['off', 'on'] },
      {
        name: 'bearing',
        type: 'object',
        fields: [{ name: 'temperature', type: 'number', staleAfterSeconds: 60 }],
      },
      { name: 'history', type: 'array', items: { type: 'number' } },
      { name: 'motor', type: 'model', model: { id: motor } },
    ];

    before(async () => {
      server = await startTestServer(dialect, { config: { mqttPort: await freePort() } });
      token = await createPat(server.admin, [
        'models:read',
        'models:write',
        'uns:read',
        'uns:write',
        'uns:publish',
      ]);
      api = server.client.as({ token, org: server.orgId });
      const motor = await api.post(MODELS, {
        name: 'Motor',
        fields: [{ name: 'current', type: 'number', unit: 'A', constraints: { max: 50 } }],
      });
      motorId = motor.body.data.id;
      const pump = await api.post(MODELS, { name: 'Pump', fields: pumpFields(motorId) });
      assert.equal(pump.status, 201, pump.text);
      pumpId = pump.body.data.id;
    });
    after(async () => {
      for (const client of clients) client.end(true);
      await server?.close();
    });

    it('binds each leaf field as a UNS schema binding of <prefix>/<field path>', async () => {
      const res = await api.post(`${MODELS}/${pumpId}/bindings`, { topicPrefix: PREFIX });
      assert.equal(res.status, 201, res.text);
      assert.deepEqual(
        res.body.data.leaves.map((l: { filter: string }) => l.filter),
        [`${PREFIX}/pressure`, `${PREFIX}/state`, `${PREFIX}/bearing/temperature`, `${PREFIX}/motor/current`],
      );
      assert.deepEqual(
        res.body.data.skipped.map((s: { path: string }) => s.path),
        ['history'],
      );
      assert.equal(res.body.data.modelVersion, 1);
      const uns = await bindingsOf();
      assert.equal(uns.filter((b) => b.filter.startsWith(PREFIX)).length, 4);
      const pressureSchema = uns.find((b) => b.filter === `${PREFIX}/pressure`)!.schema;
      const versions = await api.get(`/api/v1/uns/topics/schemas/${pressureSchema.name}`);
      assert.deepEqual(versions.body.data[0].definition, {
        jsonSchema: { type: 'number' },
        unit: 'kPa',
        minimum: 0,
        maximum: 1000,
      });
      const stale = uns.find((b) => b.filter === `${PREFIX}/bearing/temperature`)!.schema;
      const staleDef = (await api.get(`/api/v1/uns/topics/schemas/${stale.name}`)).body.data[0].definition;
      assert.equal(staleDef.staleAfterMs, 60_000);
      const listed = await api.get(`${MODELS}/${pumpId}/bindings`);
      assert.equal(listed.body.data.length, 1);
    });

    it('over HTTP: an out-of-range value is stored with quality 1 and a violation; a wrong type gets 400', async () => {
      const topic = `${PREFIX}/pressure`;
      assert.equal((await api.post(PUBLISH, { topic, value: 500 })).status, 200);
      assert.equal((await latest(topic)).quality, 0);
      assert.equal((await api.post(PUBLISH, { topic, value: 2000 })).status, 200);
      assert.equal((await latest(topic)).quality, 1);
      const found = await violations(topic);
      assert.equal(found.length, 1);
      assert.equal(found[0]!.kind, 'range');
      const before = await unsCounts(server);
      const wrong = await api.post(PUBLISH, { topic, value: 'high' });
      assert.equal(wrong.status, 400);
      assert.match(wrong.body.message, /^value must be of type number/);
      assert.deepEqual(await unsCounts(server), before);
      const nested = `${PREFIX}/motor/current`;
      assert.equal((await api.post(PUBLISH, { topic: nested, value: 51 })).status, 200);
      assert.equal((await latest(nested)).quality, 1);
      assert.equal((await api.post(PUBLISH, { topic: `${PREFIX}/state`, value: 'broken' })).status, 200);
      assert.equal((await latest(`${PREFIX}/state`)).quality, 1);
      assert.equal((await api.post(PUBLISH, { topic: `${PREFIX}/state`, value: 3 })).status, 400);
    });

    it('over MQTT: an out-of-range value is stored with quality 1 and a violation; a wrong type is refused', async () => {
      const topic = `${PREFIX}/bearing/temperature`;
      const client = await openMqtt();
      await client.publishAsync(`${PREFIX}/pressure`, '1500', { qos: 1 });
      const latestPressure = await latest(`${PREFIX}/pressure`);
      assert.equal(latestPressure.value, 1500);
      assert.equal(latestPressure.quality, 1);
      assert.equal((await violations(`${PREFIX}/pressure`)).length, 2);
      const old = new Date(Date.now() - 3_600_000).toISOString();
      await client.publishAsync(topic, JSON.stringify({ value: 40, timestamp: old }), { qos: 1 });
      assert.equal((await latest(topic)).quality, 1);
      assert.equal((await violations(topic))[0]!.kind, 'stale');
      const before = await unsCounts(server);
      const bad = await openMqtt();
      const closed = new Promise<void>((resolve) => bad.once('close', () => resolve()));
      bad.publish(`${PREFIX}/pressure`, '"high"', { qos: 1 });
      await closed;
      assert.deepEqual(await unsCounts(server), before);
    });

    it('refuses a breaking change to a bound model without acknowledgement (409 listing dependents), changing nothing', async () => {
      const fields = pumpFields(motorId).filter((f) => f.name !== 'state');
      const before = {
        versions: (await api.get(`${MODELS}/${pumpId}/versions`)).body.pagination.total,
        uns: await bindingsOf(),
      };
      const res = await api.put(`${MODELS}/${pumpId}`, { name: 'Pump', version: 1, fields });
      assert.equal(res.status, 409, res.text);
      assert.equal(res.body.error, 'conflict');
      assert.deepEqual(res.body.breakingChanges, [{ field: 'state', reason: 'removed' }]);
      assert.equal(res.body.dependents[0].type, 'model-binding');
      assert.equal(res.body.dependents[0].topicPrefix, PREFIX);
      assert.equal((await api.get(`${MODELS}/${pumpId}/versions`)).body.pagination.total, before.versions);
      assert.deepEqual(await bindingsOf(), before.uns);
      const tightened = pumpFields(motorId).map((f) =>
        f.name === 'pressure' ? { ...f, constraints: { min: 0, max: 500 } } : f,
      );
      const tight = await api.put(`${MODELS}/${pumpId}`, { name: 'Pump', version: 1, fields: tightened });
      assert.equal(tight.status, 409);
      assert.match(tight.body.breakingChanges[0].reason, /max tightened/);
      const typed = pumpFields(motorId).map((f) =>
        f.name === 'pressure' ? { name: 'pressure', type: 'string' } : f,
      );
      assert.equal(
        (await api.put(`${MODELS}/${pumpId}`, { name: 'Pump', version: 1, fields: typed })).status,
        409,
      );
    });

    it('a compatible change needs no acknowledgement and rebinds: a new field gets its binding', async () => {
      const fields = [...pumpFields(motorId), { name: 'flow', type: 'number', unit: 'm3/h' }].map((f) =>
        f.name === 'pressure' ? { ...f, constraints: { min: 0, max: 2500 } } : f,
      );
      const res = await api.put(`${MODELS}/${pumpId}`, { name: 'Pump', version: 1, fields });
      assert.equal(res.status, 200, res.text);
      const binding = (await api.get(`${MODELS}/${pumpId}/bindings`)).body.data[0];
      assert.equal(binding.modelVersion, 2);
      const uns = await bindingsOf();
      assert.ok(uns.some((b) => b.filter === `${PREFIX}/flow`));
      assert.equal(uns.find((b) => b.filter === `${PREFIX}/pressure`)!.schema.version, 2);
      assert.equal((await api.post(PUBLISH, { topic: `${PREFIX}/pressure`, value: 2000 })).status, 200);
      assert.equal((await latest(`${PREFIX}/pressure`)).quality, 0);
      assert.equal((await api.post(PUBLISH, { topic: `${PREFIX}/flow`, value: 'x' })).status, 400);
    });

    it('a breaking change with acknowledgement applies and removes the binding of a removed field', async () => {
      const fields = [
        ...pumpFields(motorId).filter((f) => f.name !== 'state'),
        { name: 'flow', type: 'number' },
      ];
      const res = await api.put(`${MODELS}/${pumpId}?acknowledgeBreaking=true`, {
        name: 'Pump',
        version: 2,
        fields,
      });
      assert.equal(res.status, 200, res.text);
      const uns = await bindingsOf();
      assert.equal(
        uns.some((b) => b.filter === `${PREFIX}/state`),
        false,
      );
      assert.equal((await api.post(PUBLISH, { topic: `${PREFIX}/state`, value: 3 })).status, 200);
    });

    it('a breaking change to a referenced model counts its referrers’ bindings and rebinds them', async () => {
      const tightened = await api.put(`${MODELS}/${motorId}`, {
        name: 'Motor',
        version: 1,
        fields: [{ name: 'current', type: 'number', unit: 'A', constraints: { max: 10 } }],
      });
      assert.equal(tightened.status, 409, tightened.text);
      assert.equal(tightened.body.dependents[0].model.id, pumpId);
      const ok = await api.put(`${MODELS}/${motorId}?acknowledgeBreaking=true`, {
        name: 'Motor',
        version: 1,
        fields: [{ name: 'current', type: 'number', unit: 'A', constraints: { max: 10 } }],
      });
      assert.equal(ok.status, 200, ok.text);
      assert.equal((await api.post(PUBLISH, { topic: `${PREFIX}/motor/current`, value: 20 })).status, 200);
      assert.equal((await latest(`${PREFIX}/motor/current`)).quality, 1);
    });

    it('a revert of a bound model is checked like an update', async () => {
      const res = await api.post(`${MODELS}/${pumpId}/versions/1/revert`);
      // Version 1 had the narrower pressure range (max 1000 < 2500): breaking.
      assert.equal(res.status, 409, res.text);
      const ok = await api.post(`${MODELS}/${pumpId}/versions/1/revert?acknowledgeBreaking=true`);
      assert.equal(ok.status, 200, ok.text);
      assert.ok((await bindingsOf()).some((b) => b.filter === `${PREFIX}/state`));
    });

    it('refuses bad prefixes and a topic already bound by something else, storing nothing', async () => {
      const before = await bindingsOf();
      for (const topicPrefix of ['v2/acme/x', 'v1', 'v1/a/+/b', 'v1//a', 5]) {
        const res = await api.post(`${MODELS}/${pumpId}/bindings`, { topicPrefix });
        assert.equal(res.status, 400, `${topicPrefix}: ${res.text}`);
      }
      assert.equal(
        (await api.post(`${MODELS}/${pumpId}/bindings`, { topicPrefix: 'v1/a', mode: 'loose' })).status,
        400,
      );
      await api.post('/api/v1/uns/topics/schemas', {
        name: 'manual',
        definition: { jsonSchema: { type: 'number' } },
      });
      assert.equal(
        (
          await api.post('/api/v1/uns/topics/schema-bindings', {
            filter: 'v1/other/pump/pressure',
            schema: 'manual',
          })
        ).status,
        201,
      );
      const after1 = await bindingsOf();
      const schemaRows = async () =>
        Number(
          (
            await server.storage.db
              .selectFrom('uns_schemas')
              .select((eb) => eb.fn.countAll().as('n'))
              .executeTakeFirst()
          )?.n,
        );
      const schemasBefore = await schemaRows();
      const res = await api.post(`${MODELS}/${pumpId}/bindings`, { topicPrefix: 'v1/other/pump' });
      assert.equal(res.status, 409, res.text);
      assert.match(res.body.message, /v1\/other\/pump\/pressure/);
      assert.deepEqual(await bindingsOf(), after1);
      assert.equal(await schemaRows(), schemasBefore);
      // A model whose first field would get a new schema, its second refused: nothing of it stays.
      const fresh = await api.post(MODELS, {
        name: 'Fresh',
        fields: [
          { name: 'a', type: 'number' },
          { name: 'b', type: 'number' },
        ],
      });
      assert.equal(
        (await api.post('/api/v1/uns/topics/schema-bindings', { filter: 'v1/fresh/x/b', schema: 'manual' }))
          .status,
        201,
      );
      const beforeFresh = { schemas: await schemaRows(), bindings: await bindingsOf() };
      const refused = await api.post(`${MODELS}/${fresh.body.data.id}/bindings`, {
        topicPrefix: 'v1/fresh/x',
      });
      assert.equal(refused.status, 409, refused.text);
      assert.deepEqual({ schemas: await schemaRows(), bindings: await bindingsOf() }, beforeFresh);
      assert.equal((await api.get(`${MODELS}/${fresh.body.data.id}/bindings`)).body.data.length, 0);
      assert.equal((await api.get(`${MODELS}/${pumpId}/bindings`)).body.data.length, 1);
      assert.equal(after1.length, before.length + 1);
      const other = await api.post(MODELS, { name: 'Other', fields: [{ name: 'x', type: 'number' }] });
      const taken = await api.post(`${MODELS}/${other.body.data.id}/bindings`, { topicPrefix: PREFIX });
      assert.equal(taken.status, 409);
    });

    it('strict mode refuses any violation; unbinding removes the schema bindings', async () => {
      const strict = await api.post(`${MODELS}/${motorId}/bindings`, {
        topicPrefix: 'v1/strict/m1',
        mode: 'strict',
      });
      assert.equal(strict.status, 201, strict.text);
      assert.equal((await api.post(PUBLISH, { topic: 'v1/strict/m1/current', value: 11 })).status, 400);
      assert.equal((await api.post(PUBLISH, { topic: 'v1/strict/m1/current', value: 9 })).status, 200);
      const again = await api.post(`${MODELS}/${motorId}/bindings`, {
        topicPrefix: 'v1/strict/m1',
        mode: 'normal',
      });
      assert.equal(again.status, 200);
      assert.equal((await api.post(PUBLISH, { topic: 'v1/strict/m1/current', value: 11 })).status, 200);
      const del = await api.delete(`${MODELS}/${motorId}/bindings/${strict.body.data.id}`);
      assert.equal(del.status, 204);
      assert.equal(
        (await bindingsOf()).some((b) => b.filter.startsWith('v1/strict/m1')),
        false,
      );
      assert.equal((await api.post(PUBLISH, { topic: 'v1/strict/m1/current', value: 'x' })).status, 200);
    });

    it('deleting an organization takes its models, versions and model bindings', async () => {
      const org = (await server.admin.post('/api/v1/organizations', { name: 'Short-lived' })).body.data.id;
      const inOrg = server.admin.inOrg(org);
      const m = await inOrg.post(MODELS, { name: 'Temp', fields: [{ name: 'v', type: 'number' }] });
      assert.equal(m.status, 201, m.text);
      assert.equal(
        (await inOrg.post(`${MODELS}/${m.body.data.id}/bindings`, { topicPrefix: 'v1/temp/a' })).status,
        201,
      );
      assert.equal((await server.admin.post(`/api/v1/organizations/${org}/suspend`)).status, 200);
      const deleted = await server.admin.delete(`/api/v1/organizations/${org}`);
      assert.ok(deleted.status === 200 || deleted.status === 204, deleted.text);
      const db = server.storage.db;
      for (const table of ['models', 'model_bindings', 'entity_versions', 'uns_schema_bindings'] as const) {
        const rows = await db
          .selectFrom(table)
          .select('organization_id')
          .where('organization_id', '=', org)
          .execute();
        assert.equal(rows.length, 0, table);
      }
    });

    it('deleting a bound model needs acknowledgement and takes its schema bindings', async () => {
      const m = await api.post(MODELS, { name: 'Gone', fields: [{ name: 'v', type: 'integer' }] });
      const id = m.body.data.id;
      assert.equal((await api.post(`${MODELS}/${id}/bindings`, { topicPrefix: 'v1/gone/a' })).status, 201);
      const refused = await api.delete(`${MODELS}/${id}`);
      assert.equal(refused.status, 409);
      assert.equal(refused.body.dependents[0].topicPrefix, 'v1/gone/a');
      assert.equal((await api.get(`${MODELS}/${id}`)).status, 200);
      assert.equal((await api.delete(`${MODELS}/${id}?acknowledgeBreaking=true`)).status, 204);
      assert.equal(
        (await bindingsOf()).some((b) => b.filter === 'v1/gone/a/v'),
        false,
      );
    });
  });
}
