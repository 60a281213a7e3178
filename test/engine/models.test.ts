import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { testDialects } from '../helpers/dialects.js';
import { addMember, buildOrganization, buildUser } from '../helpers/factories.js';
import type { TestClient } from '../helpers/http-client.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';
import { createPat } from '../uns/uns-helpers.js';

const addFormats = ((addFormatsModule as unknown as { default?: unknown }).default ?? addFormatsModule) as (
  ajv: Ajv2020,
) => Ajv2020;

const MODELS = '/api/v1/engine/models';

/** Rows of the tables a model write touches: what "stores nothing" is asserted against. */
async function counts(server: TestServer) {
  const db = server.storage.db;
  const count = async (table: 'models' | 'entity_versions' | 'model_bindings' | 'uns_schemas') =>
    Number(
      (
        await db
          .selectFrom(table)
          .select((eb) => eb.fn.countAll().as('n'))
          .executeTakeFirst()
      )?.n ?? 0,
    );
  return {
    models: await count('models'),
    versions: await count('entity_versions'),
    bindings: await count('model_bindings'),
    schemas: await count('uns_schemas'),
  };
}

const motorFields = [
  { name: 'current', type: 'number', unit: 'A', constraints: { min: 0, max: 100 } },
  { name: 'running', type: 'boolean', required: true },
];

for (const dialect of testDialects()) {
  describe(`Models [${dialect}]`, () => {
    let server: TestServer;
    let api: TestClient;
    let motorId: string;

    const create = (body: unknown) => api.post(MODELS, body);
    const pumpBody = (name: string, motor: string) => ({
      name,
      description: 'A centrifugal pump',
      labels: ['pump', 'line-1'],
      fields: [
        { name: 'pressure', type: 'number', unit: 'kPa', constraints: { min: 0, max: 1000 }, required: true },
        { name: 'state', type: 'enum', enum: ['off', 'on', 'fault'], default: 'off' },
        { name: 'serial', type: 'string', constraints: { maxLength: 12, pattern: '^[A-Z]{2}[0-9]+$' } },
        { name: 'since', type: 'datetime' },
        {
          name: 'bearing',
          type: 'object',
          fields: [
            { name: 'temperature', type: 'number', unit: '°C', constraints: { max: 120 } },
            { name: 'vibration', type: 'number', staleAfterSeconds: 60 },
          ],
        },
        { name: 'history', type: 'array', items: { type: 'integer', constraints: { min: 0 } } },
        { name: 'motor', type: 'model', model: { id: motor } },
        { name: 'extra', type: 'any' },
      ],
    });

    before(async () => {
      server = await startTestServer(dialect);
      const token = await createPat(server.admin, ['models:read', 'models:write']);
      api = server.client.as({ token, org: server.orgId });
      const motor = await create({ name: 'Motor', fields: motorFields });
      assert.equal(motor.status, 201, motor.text);
      motorId = motor.body.data.id;
    });
    after(() => server?.close());

    it('creates a model at version 1 with a create version recorded', async () => {
      const res = await create(pumpBody('Pump', motorId));
      assert.equal(res.status, 201, res.text);
      assert.equal(res.body.data.version, 1);
      assert.equal(res.body.data.fields.length, 8);
      const versions = await api.get(`${MODELS}/${res.body.data.id}/versions`);
      assert.equal(versions.status, 200);
      assert.equal(versions.body.data.length, 1);
      assert.equal(versions.body.data[0].changeType, 'create');
      assert.equal(typeof versions.body.data[0].createdBy, 'string');
    });

    describe('refuses bad input with 400 naming the path, storing nothing and recording no version', () => {
      const bad: [string, unknown, RegExp][] = [
        ['a name too short', { name: 'x' }, /^\/name: must be 2 to 100/],
        ['a name too long', { name: 'n'.repeat(101) }, /^\/name/],
        ['a name that is not a string', { name: 5 }, /^\/name/],
        ['an unknown member', { name: 'Ok', colour: 'red' }, /^\/colour: is not a known member/],
        ['labels that repeat', { name: 'Ok', labels: ['a', 'a'] }, /^\/labels\/1/],
        ['fields that are not an array', { name: 'Ok', fields: {} }, /^\/fields: must be an array/],
        [
          'an unknown field type',
          { name: 'Ok', fields: [{ name: 'a', type: 'float' }] },
          /^\/fields\/0\/type/,
        ],
        [
          'a field name with "/"',
          { name: 'Ok', fields: [{ name: 'a/b', type: 'number' }] },
          /^\/fields\/0\/name/,
        ],
        [
          'a field name with "+"',
          { name: 'Ok', fields: [{ name: 'a+', type: 'number' }] },
          /^\/fields\/0\/name/,
        ],
        ['an empty field name', { name: 'Ok', fields: [{ name: '', type: 'number' }] }, /^\/fields\/0\/name/],
        [
          'a field name of 129 characters',
          { name: 'Ok', fields: [{ name: 'f'.repeat(129), type: 'number' }] },
          /^\/fields\/0\/name: must be 1 to 128/,
        ],
        [
          'a duplicate field name',
          {
            name: 'Ok',
            fields: [
              { name: 'a', type: 'number' },
              { name: 'a', type: 'string' },
            ],
          },
          /^\/fields\/1\/name: repeats/,
        ],
        [
          'a duplicate nested field name',
          {
            name: 'Ok',
            fields: [
              {
                name: 'o',
                type: 'object',
                fields: [
                  { name: 'x', type: 'number' },
                  { name: 'x', type: 'number' },
                ],
              },
            ],
          },
          /^\/fields\/0\/fields\/1\/name: repeats/,
        ],
        [
          'min above max',
          { name: 'Ok', fields: [{ name: 'a', type: 'number', constraints: { min: 5, max: 1 } }] },
          /^\/fields\/0\/constraints\/min/,
        ],
        [
          'min on a string',
          { name: 'Ok', fields: [{ name: 'a', type: 'string', constraints: { min: 1 } }] },
          /^\/fields\/0\/constraints\/min: applies to number/,
        ],
        [
          'a pattern with a back-reference',
          { name: 'Ok', fields: [{ name: 'a', type: 'string', constraints: { pattern: '(a)\\1' } }] },
          /^\/fields\/0\/constraints\/pattern/,
        ],
        [
          'a pattern with look-ahead',
          { name: 'Ok', fields: [{ name: 'a', type: 'string', constraints: { pattern: 'a(?=b)' } }] },
          /^\/fields\/0\/constraints\/pattern/,
        ],
        [
          'an enum without values',
          { name: 'Ok', fields: [{ name: 'a', type: 'enum', enum: [] }] },
          /^\/fields\/0\/enum/,
        ],
        [
          'an object without fields',
          { name: 'Ok', fields: [{ name: 'a', type: 'object' }] },
          /^\/fields\/0\/fields/,
        ],
        [
          'an array without items',
          { name: 'Ok', fields: [{ name: 'a', type: 'array' }] },
          /^\/fields\/0\/items/,
        ],
        [
          'a reference to a model that does not exist',
          {
            name: 'Ok',
            fields: [{ name: 'm', type: 'model', model: { id: '00000000-0000-4000-8000-000000000000' } }],
          },
          /^\/fields\/0\/model: refers to a model/,
        ],
        [
          'a default that breaks its max',
          { name: 'Ok', fields: [{ name: 'a', type: 'number', constraints: { max: 10 }, default: 11 }] },
          /^\/fields\/0\/default: breaks the field's own rules/,
        ],
        [
          'a default of the wrong type',
          { name: 'Ok', fields: [{ name: 'a', type: 'integer', default: 1.5 }] },
          /^\/fields\/0\/default/,
        ],
        [
          'a default outside its enum',
          { name: 'Ok', fields: [{ name: 'a', type: 'enum', enum: ['x'], default: 'y' }] },
          /^\/fields\/0\/default/,
        ],
        [
          'a nested default that breaks its pattern',
          {
            name: 'Ok',
            fields: [
              {
                name: 'o',
                type: 'object',
                fields: [{ name: 's', type: 'string', constraints: { pattern: '^a+$' }, default: 'b' }],
              },
            ],
          },
          /^\/fields\/0\/fields\/0\/default/,
        ],
        [
          'a staleAfterSeconds of 0',
          { name: 'Ok', fields: [{ name: 'a', type: 'number', staleAfterSeconds: 0 }] },
          /^\/fields\/0\/staleAfterSeconds/,
        ],
        [
          'a unit too long',
          { name: 'Ok', fields: [{ name: 'a', type: 'number', unit: 'u'.repeat(33) }] },
          /^\/fields\/0\/unit/,
        ],
        [
          'an array item with an unknown member',
          { name: 'Ok', fields: [{ name: 'a', type: 'array', items: { type: 'number', name: 'x' } }] },
          /^\/fields\/0\/items\/name/,
        ],
      ];
      for (const [what, body, message] of bad) {
        it(what, async () => {
          const before = await counts(server);
          const res = await create(body);
          assert.equal(res.status, 400, res.text);
          assert.equal(res.body.error, 'bad_request');
          assert.match(res.body.message, message);
          assert.equal(typeof res.body.path, 'string');
          assert.deepEqual(await counts(server), before);
        });
      }

      it('a body that is not an object', async () => {
        const before = await counts(server);
        const res = await api.request('POST', MODELS, {
          raw: '[1]',
          headers: { 'content-type': 'application/json' },
        });
        assert.equal(res.status, 400);
        assert.deepEqual(await counts(server), before);
      });

      it('a name that another model has, ignoring case (409)', async () => {
        const before = await counts(server);
        const res = await create({ name: 'motor' });
        assert.equal(res.status, 409);
        assert.equal(res.body.error, 'conflict');
        assert.deepEqual(await counts(server), before);
      });
    });

    it('refuses a reference cycle A → B → A on update, changing nothing', async () => {
      const a = (await create({ name: 'Cycle A' })).body.data;
      const b = await create({
        name: 'Cycle B',
        fields: [{ name: 'a', type: 'model', model: { id: a.id } }],
      });
      assert.equal(b.status, 201, b.text);
      const before = await counts(server);
      const res = await api.put(`${MODELS}/${a.id}`, {
        name: 'Cycle A',
        version: 1,
        fields: [{ name: 'b', type: 'model', model: { id: b.body.data.id } }],
      });
      assert.equal(res.status, 400, res.text);
      assert.match(
        res.body.message,
        /^\/fields\/0\/model: is a reference cycle: "Cycle A" → "Cycle B" → "Cycle A"/,
      );
      assert.deepEqual(await counts(server), before);
      assert.equal((await api.get(`${MODELS}/${a.id}`)).body.data.version, 1);
      const self = await api.put(`${MODELS}/${a.id}`, {
        name: 'Cycle A',
        version: 1,
        fields: [
          { name: 'me', type: 'object', fields: [{ name: 'again', type: 'model', model: { id: a.id } }] },
        ],
      });
      assert.equal(self.status, 400);
      assert.match(self.body.message, /^\/fields\/0\/fields\/0\/model: is a reference cycle/);
    });

    it('lists with search, label filter, sort and paging', async () => {
      for (const name of ['List Alpha', 'List Beta', 'List Gamma'])
        assert.equal(
          (await create({ name, labels: name === 'List Beta' ? ['beta', '50%'] : ['other'] })).status,
          201,
        );
      const searched = await api.get(`${MODELS}?search=list&sort=name&order=desc`);
      assert.deepEqual(
        searched.body.data.map((m: { name: string }) => m.name),
        ['List Gamma', 'List Beta', 'List Alpha'],
      );
      assert.equal(searched.body.pagination.total, 3);
      const labelled = await api.get(`${MODELS}?label=beta`);
      assert.deepEqual(
        labelled.body.data.map((m: { name: string }) => m.name),
        ['List Beta'],
      );
      assert.equal((await api.get(`${MODELS}?label=BETA`)).body.data.length, 1);
      assert.equal((await api.get(`${MODELS}?label=${encodeURIComponent('50%')}`)).body.data.length, 1);
      assert.equal((await api.get(`${MODELS}?label=${encodeURIComponent('5_%')}`)).body.data.length, 0);
      assert.equal((await api.get(`${MODELS}?label=5`)).body.data.length, 0);
      const page = await api.get(`${MODELS}?search=list&sort=name&limit=2&offset=2`);
      assert.deepEqual(
        page.body.data.map((m: { name: string }) => m.name),
        ['List Gamma'],
      );
      assert.equal(typeof page.body.data[0].fieldCount, 'number');
      assert.equal((await api.get(`${MODELS}?sort=colour`)).status, 400);
    });

    it('updates with the version it was based on; a stale version gets 409 and changes nothing', async () => {
      const m = (await create({ name: 'Updated', fields: [{ name: 'a', type: 'number' }] })).body.data;
      const next = await api.put(`${MODELS}/${m.id}`, {
        name: 'Updated',
        version: 1,
        fields: [
          { name: 'a', type: 'number' },
          { name: 'b', type: 'string' },
        ],
      });
      assert.equal(next.status, 200, next.text);
      assert.equal(next.body.data.version, 2);
      const before = await counts(server);
      const stale = await api.put(`${MODELS}/${m.id}`, { name: 'Stale', version: 1, fields: [] });
      assert.equal(stale.status, 409);
      assert.equal(stale.body.currentVersion, 2);
      assert.deepEqual(await counts(server), before);
      const now = (await api.get(`${MODELS}/${m.id}`)).body.data;
      assert.equal(now.name, 'Updated');
      assert.equal(now.fields.length, 2);
      const missing = await api.put(`${MODELS}/${m.id}`, { name: 'Updated', fields: [] });
      assert.equal(missing.status, 400);
      assert.match(missing.body.message, /^\/version/);
      const bad = await api.put(`${MODELS}/${m.id}`, {
        name: 'Updated',
        version: 2,
        fields: [{ name: 'x', type: 'nope' }],
      });
      assert.equal(bad.status, 400);
      assert.deepEqual(await counts(server), before);
    });

    it('writes no version for an update to what is stored; fields in another order are a change', async () => {
      const fields = [
        { name: 'a', type: 'number', unit: 'bar' },
        { name: 'b', type: 'string' },
      ];
      const m = (await create({ name: 'Steady', labels: ['line-2'], fields })).body.data;
      const before = await counts(server);
      const same = await api.put(`${MODELS}/${m.id}`, {
        version: 1,
        fields: [{ unit: 'bar', type: 'number', name: 'a' }, fields[1]],
        labels: ['line-2'],
        name: 'Steady',
      });
      assert.equal(same.status, 200, same.text);
      assert.equal(same.body.data.version, 1);
      assert.deepEqual(await counts(server), before);
      const reordered = await api.put(`${MODELS}/${m.id}`, {
        version: 1,
        name: 'Steady',
        labels: ['line-2'],
        fields: [fields[1], fields[0]],
      });
      assert.equal(reordered.status, 200, reordered.text);
      assert.equal(reordered.body.data.version, 2);
      assert.deepEqual(
        reordered.body.data.fields.map((f: { name: string }) => f.name),
        ['b', 'a'],
      );
    });

    it('lets one of two concurrent updates based on the same version win; the other gets 409', async () => {
      const m = (await create({ name: 'Raced' })).body.data;
      const results = await Promise.all(
        ['first', 'second'].map((description) =>
          api.put(`${MODELS}/${m.id}`, { name: 'Raced', version: 1, description }),
        ),
      );
      assert.deepEqual(results.map((r) => r.status).sort(), [200, 409]);
      const versions = await api.get(`${MODELS}/${m.id}/versions`);
      assert.equal(versions.body.pagination.total, 2);
      const winner = results.find((r) => r.status === 200)!.body.data.description;
      assert.equal((await api.get(`${MODELS}/${m.id}`)).body.data.description, winner);
    });

    it('summarizes versions, diffs on the server and reverts as a new version', async () => {
      const m = (
        await create({ name: 'Versioned', fields: [{ name: 'pressure', type: 'number', unit: 'kPa' }] })
      ).body.data;
      const v2 = await api.put(`${MODELS}/${m.id}`, {
        name: 'Versioned',
        version: 1,
        fields: [
          { name: 'pressure', type: 'number', unit: 'bar' },
          { name: 'flow', type: 'number' },
        ],
      });
      assert.equal(v2.status, 200);
      const list = await api.get(`${MODELS}/${m.id}/versions`);
      assert.deepEqual(list.body.data[0].summary, {
        added: ['/fields/flow'],
        removed: [],
        changed: ['/fields/pressure'],
      });
      const diff = await api.get(`${MODELS}/${m.id}/versions/2/diff?against=1`);
      assert.equal(diff.status, 200);
      const paths = diff.body.data.changes.map((c: { path: string; kind: string }) => `${c.kind} ${c.path}`);
      assert.deepEqual(paths.sort(), ['added /fields/1', 'changed /fields/0/unit']);
      const reverted = await api.post(`${MODELS}/${m.id}/versions/1/revert`);
      assert.equal(reverted.status, 200, reverted.text);
      assert.equal(reverted.body.data.version, 3);
      assert.deepEqual(reverted.body.data.fields, [{ name: 'pressure', type: 'number', unit: 'kPa' }]);
      const v3 = await api.get(`${MODELS}/${m.id}/versions/3`);
      assert.equal(v3.body.data.changeType, 'revert');
      assert.equal(v3.body.data.revertedFrom, 1);
      assert.deepEqual(v3.body.data.summary, {
        added: [],
        removed: ['/fields/flow'],
        changed: ['/fields/pressure'],
      });
      const v1 = await api.get(`${MODELS}/${m.id}/versions/1`);
      assert.equal(v1.body.data.changeType, 'create');
      assert.equal(v1.body.data.snapshot.fields[0].unit, 'kPa');
      assert.equal((await api.get(`${MODELS}/${m.id}/versions/9`)).status, 404);
    });

    it('keeps every version of a model updated hundreds of times (paged list)', async () => {
      const m = (await create({ name: 'Busy' })).body.data;
      for (let v = 1; v <= 250; v++) {
        const res = await api.put(`${MODELS}/${m.id}`, {
          name: 'Busy',
          version: v,
          description: `edit ${v}`,
        });
        assert.equal(res.status, 200, res.text);
      }
      const first = await api.get(`${MODELS}/${m.id}/versions?limit=100`);
      assert.equal(first.body.pagination.total, 251);
      assert.equal(first.body.data.length, 100);
      assert.equal(first.body.data[0].version, 251);
      const last = await api.get(`${MODELS}/${m.id}/versions?limit=100&offset=200`);
      assert.deepEqual(
        last.body.data.map((v: { version: number }) => v.version),
        Array.from({ length: 51 }, (_, i) => 51 - i),
      );
      const old = await api.get(`${MODELS}/${m.id}/versions/7`);
      assert.equal(old.body.data.snapshot.description, 'edit 6');
    });

    it('compiles a model with a nested object, an array and a reference to a JSON Schema Ajv accepts', async () => {
      const pump = (await api.get(`${MODELS}?search=Pump`)).body.data.find(
        (m: { name: string }) => m.name === 'Pump',
      );
      const res = await api.get(`${MODELS}/${pump.id}/json-schema`);
      assert.equal(res.status, 200);
      const schema = res.body.data;
      assert.equal(schema.$schema, 'https://json-schema.org/draft/2020-12/schema');
      assert.deepEqual(schema.properties.motor, { $ref: '#/$defs/Motor' });
      assert.equal(schema.$defs.Motor.properties.current['x-unit'], 'A');
      assert.deepEqual(schema.properties.history.items, { type: 'integer', minimum: 0 });
      assert.equal(schema.properties.bearing.type, 'object');
      const ajv = new Ajv2020({
        strict: true,
        allErrors: true,
        keywords: ['x-unit', 'x-staleAfterSeconds', 'x-model'],
      });
      addFormats(ajv);
      const validate = ajv.compile(schema);
      const good = {
        pressure: 10,
        state: 'on',
        serial: 'AB123',
        since: '2026-01-01T00:00:00Z',
        bearing: { temperature: 50, vibration: 1 },
        history: [1, 2],
        motor: { current: 5, running: true },
        extra: [1, 'x'],
      };
      assert.equal(validate(good), true, JSON.stringify(validate.errors));
      assert.equal(validate({ ...good, motor: { current: 500, running: true } }), false);
    });

    it('validates a value answering every error with its exact JSON pointer', async () => {
      const pump = (await api.get(`${MODELS}?search=Pump`)).body.data.find(
        (m: { name: string }) => m.name === 'Pump',
      );
      const res = await api.post(`${MODELS}/${pump.id}/validate`, {
        value: {
          pressure: -1,
          state: 'broken',
          serial: 'ab1',
          since: 'yesterday',
          bearing: { temperature: 121, colour: 'red' },
          history: [1, -2],
          motor: { current: 'high' },
        },
      });
      assert.equal(res.status, 200, res.text);
      assert.equal(res.body.data.valid, false);
      const paths = res.body.data.errors.map((e: { path: string }) => e.path).sort();
      assert.deepEqual(paths, [
        '/bearing/colour',
        '/bearing/temperature',
        '/history/1',
        '/motor/current',
        '/motor/running',
        '/pressure',
        '/serial',
        '/since',
        '/state',
      ]);
      const ok = await api.post(`${MODELS}/${pump.id}/validate`, { value: { pressure: 1 } });
      assert.deepEqual(ok.body.data, { valid: true, errors: [] });
      const missing = await api.post(`${MODELS}/${pump.id}/validate`, { value: {} });
      assert.deepEqual(missing.body.data.errors, [{ path: '/pressure', message: 'is required' }]);
      assert.equal((await api.post(`${MODELS}/${pump.id}/validate`, {})).status, 400);
    });

    it('serves the JSON Schema and validation of any version', async () => {
      const m = (await create({ name: 'Two Versions', fields: [{ name: 'a', type: 'number' }] })).body.data;
      await api.put(`${MODELS}/${m.id}`, {
        name: 'Two Versions',
        version: 1,
        fields: [{ name: 'a', type: 'string' }],
      });
      assert.equal(
        (await api.get(`${MODELS}/${m.id}/json-schema?version=1`)).body.data.properties.a.type,
        'number',
      );
      assert.equal((await api.get(`${MODELS}/${m.id}/json-schema`)).body.data.properties.a.type, 'string');
      assert.equal(
        (await api.post(`${MODELS}/${m.id}/validate`, { value: { a: 1 }, version: 1 })).body.data.valid,
        true,
      );
      assert.equal(
        (await api.post(`${MODELS}/${m.id}/validate`, { value: { a: 1 } })).body.data.valid,
        false,
      );
      assert.equal((await api.get(`${MODELS}/${m.id}/json-schema?version=3`)).status, 404);
    });

    it('pins a reference to a version', async () => {
      const target = (await create({ name: 'Pinned Target', fields: [{ name: 'x', type: 'number' }] })).body
        .data;
      await api.put(`${MODELS}/${target.id}`, {
        name: 'Pinned Target',
        version: 1,
        fields: [{ name: 'y', type: 'number' }],
      });
      const user = await create({
        name: 'Pinned User',
        fields: [
          { name: 'old', type: 'model', model: { id: target.id, version: 1 } },
          { name: 'now', type: 'model', model: { id: target.id } },
        ],
      });
      assert.equal(user.status, 201, user.text);
      const schema = (await api.get(`${MODELS}/${user.body.data.id}/json-schema`)).body.data;
      const defs = Object.values(schema.$defs) as { properties: object }[];
      assert.deepEqual(defs.map((d) => Object.keys(d.properties)).sort(), [['x'], ['y']]);
      const missing = await create({
        name: 'Pinned Missing',
        fields: [{ name: 'old', type: 'model', model: { id: target.id, version: 5 } }],
      });
      assert.equal(missing.status, 400);
      assert.match(missing.body.message, /version 5 of model/);
    });

    it('clones a model as version 1 of a new one', async () => {
      const res = await api.post(`${MODELS}/${motorId}/clone`, { name: 'Motor copy' });
      assert.equal(res.status, 201, res.text);
      assert.equal(res.body.data.version, 1);
      assert.deepEqual(res.body.data.fields, motorFields);
      const versions = await api.get(`${MODELS}/${res.body.data.id}/versions`);
      assert.equal(versions.body.data[0].changeType, 'clone');
      const before = await counts(server);
      assert.equal((await api.post(`${MODELS}/${motorId}/clone`, { name: 'MOTOR' })).status, 409);
      const bad = await api.post(`${MODELS}/${motorId}/clone`, { name: 'x' });
      assert.equal(bad.status, 400);
      assert.equal(bad.body.path, '/name');
      assert.equal((await api.post(`${MODELS}/${motorId}/clone`, {})).status, 400);
      assert.deepEqual(await counts(server), before);
    });

    it('deletes a model with its history; one that others refer to answers 409', async () => {
      const referred = await api.delete(`${MODELS}/${motorId}`);
      assert.equal(referred.status, 409);
      assert.equal(referred.body.dependents[0].type, 'model');
      const m = (await create({ name: 'Doomed' })).body.data;
      await api.put(`${MODELS}/${m.id}`, { name: 'Doomed', version: 1, description: 'x' });
      assert.equal((await api.delete(`${MODELS}/${m.id}`)).status, 204);
      assert.equal((await api.get(`${MODELS}/${m.id}`)).status, 404);
      assert.equal((await api.get(`${MODELS}/${m.id}/versions`)).status, 404);
      const left = await server.storage.db
        .selectFrom('entity_versions')
        .select('version')
        .where('entity_id', '=', m.id)
        .execute();
      assert.equal(left.length, 0);
    });

    it("answers 404 for another organization's model, on every route", async () => {
      const otherOrg = await buildOrganization(server);
      const other = server.admin.inOrg(otherOrg);
      const id = motorId;
      assert.equal((await other.get(`${MODELS}/${id}`)).status, 404);
      assert.equal((await other.put(`${MODELS}/${id}`, { name: 'Stolen', version: 1 })).status, 404);
      assert.equal((await other.delete(`${MODELS}/${id}`)).status, 404);
      assert.equal((await other.post(`${MODELS}/${id}/clone`, { name: 'Stolen' })).status, 404);
      assert.equal((await other.get(`${MODELS}/${id}/versions`)).status, 404);
      assert.equal((await other.get(`${MODELS}/${id}/versions/1`)).status, 404);
      assert.equal((await other.post(`${MODELS}/${id}/versions/1/revert`)).status, 404);
      assert.equal((await other.get(`${MODELS}/${id}/json-schema`)).status, 404);
      assert.equal((await other.post(`${MODELS}/${id}/validate`, { value: {} })).status, 404);
      assert.equal((await other.get(`${MODELS}/${id}/bindings`)).status, 404);
      assert.equal((await other.post(`${MODELS}/${id}/bindings`, { topicPrefix: 'v1/x/y' })).status, 404);
      assert.equal((await other.get(MODELS)).body.data.length, 0);
      const refs = await other.post(MODELS, {
        name: 'Ref',
        fields: [{ name: 'm', type: 'model', model: { id } }],
      });
      assert.equal(refs.status, 400);
      assert.equal((await api.get(`${MODELS}/${id}`)).body.data.version, 1);
    });

    it('needs models:read to read and models:write to write', async () => {
      const readOnly = server.client.as({
        token: await createPat(server.admin, ['models:read']),
        org: server.orgId,
      });
      assert.equal((await readOnly.get(MODELS)).status, 200);
      const denied = await readOnly.post(MODELS, { name: 'Nope' });
      assert.equal(denied.status, 403);
      assert.equal(denied.body.error, 'insufficient_scope');
      assert.equal((await readOnly.post(`${MODELS}/${motorId}/versions/1/revert`)).status, 403);
      const none = server.client.as({
        token: await createPat(server.admin, ['uns:read']),
        org: server.orgId,
      });
      assert.equal((await none.get(MODELS)).status, 403);
      const viewer = await buildUser(server);
      await addMember(server, server.orgId, viewer.id, 'Viewer');
      const session = await server.client.login(viewer.email, viewer.password, server.orgId);
      assert.equal((await session.get(MODELS)).status, 200);
      assert.equal((await session.post(MODELS, { name: 'Viewer made' })).status, 403);
    });
  });
}
