import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { testDialects } from '../helpers/dialects.js';
import { addMember, buildOrganization, buildUser, signedInMember } from '../helpers/factories.js';
import type { TestClient } from '../helpers/http-client.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';

const SECRET = 'pa55-W0rd-never-shown-9f3c';

const opcua = (name: string, extra: Record<string, unknown> = {}) => ({
  name,
  protocol: 'opcua',
  config: { endpointUrl: 'opc.tcp://127.0.0.1:4840', username: 'operator', password: SECRET, ...extra },
  labels: ['line-1', 'press'],
});

async function counts(server: TestServer) {
  const db = server.storage.db;
  const one = async (table: 'connections' | 'connection_functions') =>
    Number(
      (
        await db
          .selectFrom(table)
          .select((eb) => eb.fn.countAll<number>().as('n'))
          .executeTakeFirstOrThrow()
      ).n,
    );
  return { connections: await one('connections'), functions: await one('connection_functions') };
}

for (const dialect of testDialects()) {
  describe(`connections CRUD [${dialect}]`, () => {
    let server: TestServer;
    let admin: TestClient;

    before(async () => {
      server = await startTestServer(dialect);
      admin = server.admin;
    });
    after(() => server?.close());

    it('lists the protocols with config schemas and function types', async () => {
      const res = await admin.get('/api/v1/connections/protocols');
      assert.equal(res.status, 200);
      const ids = res.body.data.map((p: { id: string }) => p.id);
      for (const id of ['opcua', 'modbus-tcp', 'mqtt']) assert.ok(ids.includes(id), id);
      const modbus = res.body.data.find((p: { id: string }) => p.id === 'modbus-tcp');
      assert.equal(modbus.configSchema.type, 'object');
      const read = modbus.functionTypes.find(
        (t: { type: string }) => t.type === 'modbus.readHoldingRegisters',
      );
      assert.equal(read.direction, 'read');
      assert.ok(read.configSchema.properties.byteOrder);
    });

    it('creates a connection; the secret is never returned and is encrypted at rest', async () => {
      const res = await admin.post('/api/v1/connections', opcua('Press 4'));
      assert.equal(res.status, 201, res.text);
      assert.ok(!res.text.includes(SECRET));
      assert.deepEqual(res.body.data.config.password, { configured: true });
      assert.equal(res.body.data.config.username, 'operator');
      assert.equal(res.body.data.state, 'idle');
      assert.equal(res.body.data.desiredState, 'stopped');
      const view = await admin.get(`/api/v1/connections/${res.body.data.id}`);
      assert.ok(!view.text.includes(SECRET));
      const list = await admin.get('/api/v1/connections');
      assert.ok(!list.text.includes(SECRET));
      const row = await server.storage.db
        .selectFrom('connections')
        .selectAll()
        .where('id', '=', res.body.data.id)
        .executeTakeFirstOrThrow();
      assert.ok(!JSON.stringify(row).includes(SECRET), 'the stored row holds the secret only encrypted');
      assert.match(row.secrets ?? '', /^v1\./);
      // The driver gets it back.
      assert.equal(server.app.connectors.connections.driverConfig(row).password, SECRET);
    });

    it('keeps the secret on an update that leaves it out or sends {configured: true}, replaces it when given', async () => {
      const created = (await admin.post('/api/v1/connections', opcua('Keep secret'))).body.data;
      const patched = await admin.patch(`/api/v1/connections/${created.id}`, {
        config: { ...created.config, endpointUrl: 'opc.tcp://127.0.0.1:4841' },
      });
      assert.equal(patched.status, 200, patched.text);
      const row = async () =>
        server.storage.db
          .selectFrom('connections')
          .selectAll()
          .where('id', '=', created.id)
          .executeTakeFirstOrThrow();
      assert.equal(server.app.connectors.connections.driverConfig(await row()).password, SECRET);
      await admin.patch(`/api/v1/connections/${created.id}`, {
        config: { endpointUrl: 'opc.tcp://h:1', username: 'u' },
      });
      assert.equal(server.app.connectors.connections.driverConfig(await row()).password, SECRET);
      await admin.patch(`/api/v1/connections/${created.id}`, {
        config: { endpointUrl: 'opc.tcp://h:1', username: 'u', password: 'new-one' },
      });
      assert.equal(server.app.connectors.connections.driverConfig(await row()).password, 'new-one');
    });

    it('clones a connection: stopped, new name, the same secret (unreadable), its functions', async () => {
      const created = (await admin.post('/api/v1/connections', opcua('Clone me'))).body.data;
      const fn = await admin.post(`/api/v1/connections/${created.id}/functions`, {
        name: 'temp',
        type: 'opcua.read',
        config: { nodeId: 'ns=1;s=T' },
      });
      assert.equal(fn.status, 201, fn.text);
      const clone = await admin.post(`/api/v1/connections/${created.id}/clone`, { name: 'Cloned' });
      assert.equal(clone.status, 201, clone.text);
      assert.equal(clone.body.data.name, 'Cloned');
      assert.equal(clone.body.data.desiredState, 'stopped');
      assert.deepEqual(clone.body.data.config.password, { configured: true });
      assert.ok(!clone.text.includes(SECRET));
      const row = await server.storage.db
        .selectFrom('connections')
        .selectAll()
        .where('id', '=', clone.body.data.id)
        .executeTakeFirstOrThrow();
      assert.equal(server.app.connectors.connections.driverConfig(row).password, SECRET);
      const fns = await admin.get(`/api/v1/connections/${clone.body.data.id}/functions`);
      assert.deepEqual(
        fns.body.data.map((f: { name: string }) => f.name),
        ['temp'],
      );
    });

    it('filters by protocol and label, searches, sorts and pages', async () => {
      await admin.post('/api/v1/connections', {
        name: 'Modbus A',
        protocol: 'modbus-tcp',
        config: { host: '127.0.0.1' },
        labels: ['hall-b'],
      });
      await admin.post('/api/v1/connections', {
        name: 'Modbus B',
        protocol: 'modbus-tcp',
        config: { host: '127.0.0.1' },
        description: 'boiler',
      });
      const byProtocol = await admin.get('/api/v1/connections?protocol=modbus-tcp&sort=name&order=desc');
      assert.deepEqual(
        byProtocol.body.data.map((c: { name: string }) => c.name),
        ['Modbus B', 'Modbus A'],
      );
      const byLabel = await admin.get('/api/v1/connections?label=hall-b');
      assert.deepEqual(
        byLabel.body.data.map((c: { name: string }) => c.name),
        ['Modbus A'],
      );
      const search = await admin.get('/api/v1/connections?search=BOILER');
      assert.deepEqual(
        search.body.data.map((c: { name: string }) => c.name),
        ['Modbus B'],
      );
      const state = await admin.get('/api/v1/connections?state=idle&limit=1&offset=1');
      assert.equal(state.body.data.length, 1);
      assert.ok(state.body.pagination.total >= 5);
    });

    describe('bad input: a clear error and nothing stored', () => {
      const cases: [string, unknown, number, RegExp][] = [
        [
          'unknown protocol',
          { name: 'x1', protocol: 'profibus', config: {} },
          400,
          /protocol 'profibus' is not a supported protocol/,
        ],
        [
          'config missing a required field',
          { name: 'x2', protocol: 'modbus-tcp', config: { port: 502 } },
          400,
          /config\.host is required/,
        ],
        [
          'wrong type',
          { name: 'x3', protocol: 'modbus-tcp', config: { host: 'h', port: '502' } },
          400,
          /config\.port must be integer/,
        ],
        [
          'out of range',
          { name: 'x4', protocol: 'modbus-tcp', config: { host: 'h', unitId: 300 } },
          400,
          /config\.unitId must be <= 247/,
        ],
        [
          'unknown config field',
          { name: 'x5', protocol: 'modbus-tcp', config: { host: 'h', speed: 1 } },
          400,
          /config\.speed is not a known field/,
        ],
        [
          'name too long',
          { name: 'n'.repeat(101), protocol: 'modbus-tcp', config: { host: 'h' } },
          400,
          /name/,
        ],
        [
          'description too long',
          { name: 'x6', description: 'd'.repeat(501), protocol: 'modbus-tcp', config: { host: 'h' } },
          400,
          /description/,
        ],
        [
          'bad opcua url',
          { name: 'x7', protocol: 'opcua', config: { endpointUrl: 'http://x' } },
          400,
          /config\.endpointUrl must match pattern/,
        ],
      ];
      for (const [what, body, status, message] of cases) {
        it(what, async () => {
          const before = await counts(server);
          const res = await admin.post('/api/v1/connections', body);
          assert.equal(res.status, status, res.text);
          assert.equal(res.body.error, 'bad_request');
          assert.match(res.body.message, message);
          assert.deepEqual(await counts(server), before);
        });
      }

      it('a duplicate name in the organization is 409', async () => {
        await admin.post('/api/v1/connections', {
          name: 'Dup',
          protocol: 'modbus-tcp',
          config: { host: 'h' },
        });
        const before = await counts(server);
        const res = await admin.post('/api/v1/connections', {
          name: 'Dup',
          protocol: 'modbus-tcp',
          config: { host: 'h' },
        });
        assert.equal(res.status, 409);
        assert.equal(res.body.error, 'conflict');
        assert.deepEqual(await counts(server), before);
      });

      it("another organization's connection id is 404 on every route", async () => {
        const other = await buildOrganization(server, 'Other Plant');
        const user = await buildUser(server);
        await addMember(server, other, user.id, 'Owner');
        const outsider = await server.client.login(user.email, user.password, other);
        const mine = (
          await admin.post('/api/v1/connections', {
            name: 'Mine',
            protocol: 'modbus-tcp',
            config: { host: 'h' },
          })
        ).body.data;
        const before = await counts(server);
        for (const [method, path, body] of [
          ['GET', `/api/v1/connections/${mine.id}`, undefined],
          ['PATCH', `/api/v1/connections/${mine.id}`, { name: 'stolen' }],
          ['DELETE', `/api/v1/connections/${mine.id}`, undefined],
          ['POST', `/api/v1/connections/${mine.id}/clone`, {}],
          ['POST', `/api/v1/connections/${mine.id}/start`, undefined],
          ['GET', `/api/v1/connections/${mine.id}/runtime`, undefined],
          ['GET', `/api/v1/connections/${mine.id}/functions`, undefined],
          ['GET', `/api/v1/connections/state-history?connectionId=${mine.id}`, undefined],
          ['GET', `/api/v1/connections/${mine.id}/state-history`, undefined],
          ['GET', `/api/v1/connections/state-history/summary?connectionId=${mine.id}`, undefined],
        ] as const) {
          const res = await outsider.request(method, path, { body });
          assert.equal(res.status, 404, `${method} ${path}: ${res.text}`);
          assert.equal(res.body.error, 'not_found');
        }
        assert.deepEqual(await counts(server), before);
        const list = await outsider.get('/api/v1/connections');
        assert.equal(list.body.data.length, 0);
      });

      it("a connection's state history is 404 for an unknown id and 200 for the organization's own", async () => {
        const mine = (
          await admin.post('/api/v1/connections', {
            name: 'History of mine',
            protocol: 'modbus-tcp',
            config: { host: 'h' },
          })
        ).body.data;
        const unknown = '2f6c5e1a-9d1b-4c4e-8f7a-0c1d2e3f4a5b';
        for (const query of ['state-history?connectionId=', 'state-history/summary?connectionId=']) {
          const res = await admin.get(`/api/v1/connections/${query}${unknown}`);
          assert.equal(res.status, 404, `${query}: ${res.text}`);
          assert.deepEqual(res.body, { error: 'not_found', message: res.body.message });
          assert.equal((await admin.get(`/api/v1/connections/${query}${mine.id}`)).status, 200, query);
        }
        assert.equal((await admin.get(`/api/v1/connections/${unknown}/state-history`)).status, 404);
        assert.equal((await admin.get(`/api/v1/connections/${mine.id}/state-history`)).status, 200);
        // Bad input is still 400 before the existence check.
        const bad = await admin.get(`/api/v1/connections/state-history?connectionId=${unknown}&from=nope`);
        assert.equal(bad.status, 400, bad.text);
      });

      it('a Viewer reads but cannot write (connectors:write)', async () => {
        const { client } = await signedInMember(server, 'Viewer');
        assert.equal((await client.get('/api/v1/connections')).status, 200);
        const res = await client.post('/api/v1/connections', {
          name: 'v',
          protocol: 'modbus-tcp',
          config: { host: 'h' },
        });
        assert.equal(res.status, 403);
        assert.equal(res.body.error, 'insufficient_scope');
      });
    });

    it('deletes a connection with its functions', async () => {
      const created = (
        await admin.post('/api/v1/connections', {
          name: 'Gone',
          protocol: 'modbus-tcp',
          config: { host: 'h' },
        })
      ).body.data;
      await admin.post(`/api/v1/connections/${created.id}/functions`, {
        name: 'r',
        type: 'modbus.readCoils',
        config: { address: 1 },
      });
      assert.equal((await admin.delete(`/api/v1/connections/${created.id}`)).status, 204);
      assert.equal((await admin.get(`/api/v1/connections/${created.id}`)).status, 404);
      const left = await server.storage.db
        .selectFrom('connection_functions')
        .selectAll()
        .where('connection_id', '=', created.id)
        .execute();
      assert.equal(left.length, 0);
    });
  });
}
