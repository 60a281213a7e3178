import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { testDialects } from '../helpers/dialects.js';
import { addMember, buildOrganization, buildUser } from '../helpers/factories.js';
import type { TestClient } from '../helpers/http-client.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';
import { createPat } from '../uns/uns-helpers.js';

const CONNECTIONS = '/api/v1/connections';
const SECRET = 'pw-7Hq2-versions-never-shown';
const SECOND_SECRET = 'pw-Lk09-second-never-shown';

const opcua = (name: string) => ({
  name,
  protocol: 'opcua',
  config: { endpointUrl: 'opc.tcp://127.0.0.1:4840', username: 'operator', password: SECRET },
  labels: ['line-1'],
});

/** Every body a client can read about a connection's history: list, each version, each diff. */
async function historyText(api: TestClient, path: string): Promise<string> {
  const list = await api.get(`${path}/versions?limit=200`);
  assert.equal(list.status, 200, list.text);
  const parts = [list.text];
  for (const v of list.body.data) {
    parts.push((await api.get(`${path}/versions/${v.version}`)).text);
    if (v.version > 1) parts.push((await api.get(`${path}/versions/${v.version}/diff`)).text);
  }
  return parts.join('\n');
}

for (const dialect of testDialects()) {
  describe(`connection and function versions [${dialect}]`, () => {
    let server: TestServer;
    let api: TestClient;
    const versionRows = async () =>
      Number(
        (
          await server.storage.db
            .selectFrom('entity_versions')
            .select((eb) => eb.fn.countAll<number>().as('n'))
            .executeTakeFirstOrThrow()
        ).n,
      );

    before(async () => {
      server = await startTestServer(dialect);
      api = server.admin;
    });
    after(() => server?.close());

    it('records create, update (summary naming the field) and revert as versions; never a secret', async () => {
      const created = await api.post(CONNECTIONS, opcua('Press 1'));
      assert.equal(created.status, 201, created.text);
      const id = created.body.data.id;
      assert.equal(created.body.data.version, 1);
      const path = `${CONNECTIONS}/${id}`;

      const updated = await api.patch(path, {
        config: { endpointUrl: 'opc.tcp://10.0.0.7:4840', username: 'operator' },
        version: 1,
      });
      assert.equal(updated.status, 200, updated.text);
      assert.equal(updated.body.data.version, 2);
      const list = await api.get(`${path}/versions`);
      assert.equal(list.status, 200);
      assert.equal(list.body.pagination.total, 2);
      assert.deepEqual(
        list.body.data.map((v: any) => [v.version, v.changeType]),
        [
          [2, 'update'],
          [1, 'create'],
        ],
      );
      assert.deepEqual(list.body.data[0].summary.changed, ['/config/endpointUrl']);
      assert.equal(typeof list.body.data[0].createdBy, 'string');

      const diff = await api.get(`${path}/versions/2/diff`);
      assert.equal(diff.status, 200);
      assert.deepEqual(
        diff.body.data.changes.map((c: any) => [c.path, c.from, c.to]),
        [['/config/endpointUrl', 'opc.tcp://127.0.0.1:4840', 'opc.tcp://10.0.0.7:4840']],
      );

      const reverted = await api.post(`${path}/versions/1/revert`, {});
      assert.equal(reverted.status, 200, reverted.text);
      assert.equal(reverted.body.data.version, 3);
      assert.equal(reverted.body.data.config.endpointUrl, 'opc.tcp://127.0.0.1:4840');
      const v1 = (await api.get(`${path}/versions/1`)).body.data;
      const v3 = (await api.get(`${path}/versions/3`)).body.data;
      assert.equal(v3.changeType, 'revert');
      assert.equal(v3.revertedFrom, 1);
      assert.deepEqual(v3.snapshot, v1.snapshot);
      assert.deepEqual(v1.snapshot.config.password, { configured: true });
      assert.deepEqual(v1.snapshot.config.endpointUrl, 'opc.tcp://127.0.0.1:4840');

      // The revert kept the stored secret, and wrote the audit log.
      const row = await server.storage.db
        .selectFrom('connections')
        .selectAll()
        .where('id', '=', id)
        .executeTakeFirstOrThrow();
      assert.equal(row.version, 3);
      assert.equal(server.app.connectors.connections.driverConfig(row).password, SECRET);
      const audit = await server.storage.db
        .selectFrom('audit_log')
        .select('action')
        .where('target_id', '=', id)
        .execute();
      assert.ok(audit.some((a) => a.action === 'connection.reverted'));

      // A changed secret is a changed path in the summary, never a value anywhere.
      const secretChange = await api.patch(path, {
        config: { ...v1.snapshot.config, password: SECOND_SECRET },
      });
      assert.equal(secretChange.status, 200, secretChange.text);
      const v4 = (await api.get(`${path}/versions/4`)).body.data;
      assert.deepEqual(v4.summary.changed, ['/config/password']);
      const text = await historyText(api, path);
      assert.ok(!text.includes(SECRET), 'no version, list or diff holds the secret');
      assert.ok(!text.includes(SECOND_SECRET));
      assert.ok(!reverted.text.includes(SECRET));
      const stored = await server.storage.db
        .selectFrom('entity_versions')
        .select('snapshot')
        .where('entity_id', '=', id)
        .execute();
      assert.ok(!JSON.stringify(stored).includes(SECRET));
    });

    it('writes nothing for a change to what is stored: no version, no audit entry; the same secret again is no change', async () => {
      const id = (await api.post(CONNECTIONS, opcua('Press 5'))).body.data.id;
      const path = `${CONNECTIONS}/${id}`;
      const fn = (
        await api.post(`${path}/functions`, {
          name: 'speed',
          type: 'opcua.read',
          config: { nodeId: 'ns=1;i=7' },
        })
      ).body.data;
      const audited = async () =>
        (await server.storage.db.selectFrom('audit_log').select('id').where('target_id', '=', id).execute())
          .length;
      const [rows, entries] = [await versionRows(), await audited()];
      const { config, labels, name } = opcua('Press 5');
      // The whole content again, the secret sent as stored and as the marker a read shows.
      for (const password of [SECRET, { configured: true }]) {
        const same = await api.patch(path, { name, labels, config: { ...config, password }, version: 1 });
        assert.equal(same.status, 200, same.text);
        assert.equal(same.body.data.version, 1);
      }
      const sameFunction = await api.patch(`${path}/functions/${fn.id}`, {
        name: 'speed',
        config: { nodeId: 'ns=1;i=7' },
        version: 1,
      });
      assert.equal(sameFunction.status, 200, sameFunction.text);
      assert.equal(sameFunction.body.data.version, 1);
      assert.equal(await versionRows(), rows);
      assert.equal(await audited(), entries);
      // Another secret, the rest as it is: a change.
      const changed = await api.patch(path, { config: { ...config, password: SECOND_SECRET }, version: 1 });
      assert.equal(changed.status, 200, changed.text);
      assert.equal(changed.body.data.version, 2);
      assert.deepEqual((await api.get(`${path}/versions/2`)).body.data.summary.changed, ['/config/password']);
      assert.equal(await versionRows(), rows + 1);
    });

    it('answers 409 to a stale version and changes nothing; without version an update still applies', async () => {
      const id = (await api.post(CONNECTIONS, opcua('Press 2'))).body.data.id;
      assert.equal((await api.patch(`${CONNECTIONS}/${id}`, { description: 'one', version: 1 })).status, 200);
      const rows = await versionRows();
      const stale = await api.patch(`${CONNECTIONS}/${id}`, { description: 'two', version: 1 });
      assert.equal(stale.status, 409, stale.text);
      assert.equal(stale.body.error, 'conflict');
      assert.equal(stale.body.currentVersion, 2);
      const view = (await api.get(`${CONNECTIONS}/${id}`)).body.data;
      assert.equal(view.description, 'one');
      assert.equal(view.version, 2);
      assert.equal(await versionRows(), rows);

      const free = await api.patch(`${CONNECTIONS}/${id}`, { description: 'three' });
      assert.equal(free.status, 200);
      assert.equal(free.body.data.version, 3);

      // Bad input changes nothing either: a version that is no integer, a revert to no version.
      const rowsNow = await versionRows();
      for (const version of ['3', 0, 1.5]) {
        const bad = await api.patch(`${CONNECTIONS}/${id}`, { description: 'four', version });
        assert.equal(bad.status, 400, `${JSON.stringify(version)}: ${bad.text}`);
        assert.equal(bad.body.error, 'bad_request');
        assert.match(bad.body.message, /version/);
      }
      assert.equal((await api.post(`${CONNECTIONS}/${id}/versions/0/revert`, {})).status, 400);
      const missing = await api.post(`${CONNECTIONS}/${id}/versions/99/revert`, {});
      assert.equal(missing.status, 404);
      assert.equal(missing.body.error, 'not_found');
      assert.equal((await api.get(`${CONNECTIONS}/${id}/versions/3/diff?against=0`)).status, 400);
      assert.equal((await api.get(`${CONNECTIONS}/${id}`)).body.data.version, 3);
      assert.equal(await versionRows(), rowsNow);
    });

    it('refuses a revert to a version whose secret is no longer stored, naming it', async () => {
      const id = (
        await api.post(CONNECTIONS, {
          name: 'Historian DB',
          protocol: 'mysql',
          config: { host: 'db', database: 'plant', user: 'reader', password: SECRET },
        })
      ).body.data.id;
      // Another protocol drops the stored secrets.
      const moved = await api.patch(`${CONNECTIONS}/${id}`, {
        protocol: 'postgresql',
        config: { host: 'db', database: 'plant', user: 'reader' },
      });
      assert.equal(moved.status, 200, moved.text);
      const rows = await versionRows();
      const res = await api.post(`${CONNECTIONS}/${id}/versions/1/revert`, {});
      assert.equal(res.status, 400, res.text);
      assert.equal(res.body.error, 'bad_request');
      assert.match(res.body.message, /config\.password/);
      assert.equal((await api.get(`${CONNECTIONS}/${id}`)).body.data.protocol, 'postgresql');
      assert.equal(await versionRows(), rows);
    });

    it('records version 1 of a connection made before versions on first need', async () => {
      const id = (await api.post(CONNECTIONS, opcua('Legacy press'))).body.data.id;
      await server.storage.db.deleteFrom('entity_versions').where('entity_id', '=', id).execute();
      const list = await api.get(`${CONNECTIONS}/${id}/versions`);
      assert.deepEqual(
        list.body.data.map((v: any) => [v.version, v.changeType]),
        [[1, 'create']],
      );
      await server.storage.db.deleteFrom('entity_versions').where('entity_id', '=', id).execute();
      assert.equal((await api.patch(`${CONNECTIONS}/${id}`, { description: 'x', version: 1 })).status, 200);
      const after = (await api.get(`${CONNECTIONS}/${id}/versions`)).body.data;
      assert.deepEqual(
        after.map((v: any) => [v.version, v.changeType, v.summary.changed]),
        [
          [2, 'update', ['/description']],
          [1, 'create', []],
        ],
      );
    });

    it('clone starts a history of its own; delete removes the histories of a connection and its functions', async () => {
      const id = (await api.post(CONNECTIONS, opcua('Press 3'))).body.data.id;
      const fn = await api.post(`${CONNECTIONS}/${id}/functions`, {
        name: 'speed',
        type: 'opcua.read',
        config: { nodeId: 'ns=2;s=Speed' },
      });
      assert.equal(fn.status, 201, fn.text);
      const clone = (await api.post(`${CONNECTIONS}/${id}/clone`, { name: 'Press 3b' })).body.data;
      const history = (await api.get(`${CONNECTIONS}/${clone.id}/versions`)).body.data;
      assert.deepEqual(
        history.map((v: any) => [v.version, v.changeType]),
        [[1, 'clone']],
      );
      const copied = (await api.get(`${CONNECTIONS}/${clone.id}/functions`)).body.data[0];
      assert.equal(
        (await api.get(`${CONNECTIONS}/${clone.id}/functions/${copied.id}/versions`)).body.data[0].changeType,
        'clone',
      );
      assert.equal((await api.delete(`${CONNECTIONS}/${id}`)).status, 204);
      const left = await server.storage.db
        .selectFrom('entity_versions')
        .select('entity_id')
        .where('entity_id', 'in', [id, fn.body.data.id])
        .execute();
      assert.deepEqual(left, []);
    });

    it('versions functions: update, stale 409, revert, 404 for another function', async () => {
      const id = (
        await api.post(CONNECTIONS, { name: 'PLC 9', protocol: 'modbus-tcp', config: { host: 'h' } })
      ).body.data.id;
      const fn = await api.post(`${CONNECTIONS}/${id}/functions`, {
        name: 'coils',
        type: 'modbus.readCoils',
        config: { address: 1 },
      });
      assert.equal(fn.body.data.version, 1);
      const path = `${CONNECTIONS}/${id}/functions/${fn.body.data.id}`;
      const updated = await api.patch(path, { config: { address: 7 }, version: 1 });
      assert.equal(updated.status, 200, updated.text);
      assert.equal(updated.body.data.version, 2);
      const list = (await api.get(`${path}/versions`)).body;
      assert.equal(list.pagination.total, 2);
      assert.deepEqual(list.data[0].summary.changed, ['/config/address']);

      const rows = await versionRows();
      const stale = await api.patch(path, { config: { address: 9 }, version: 1 });
      assert.equal(stale.status, 409);
      assert.equal(stale.body.error, 'conflict');
      assert.equal((await api.get(path)).body.data.config.address, 7);
      assert.equal(await versionRows(), rows);

      const reverted = await api.post(`${path}/versions/1/revert`, {});
      assert.equal(reverted.status, 200, reverted.text);
      assert.equal(reverted.body.data.version, 3);
      assert.equal(reverted.body.data.config.address, 1);
      const v3 = (await api.get(`${path}/versions/3`)).body.data;
      assert.equal(v3.changeType, 'revert');
      assert.deepEqual(v3.snapshot, (await api.get(`${path}/versions/1`)).body.data.snapshot);
      // A function id under another connection is 404.
      const other = (
        await api.post(CONNECTIONS, { name: 'PLC 10', protocol: 'modbus-tcp', config: { host: 'h' } })
      ).body.data.id;
      const wrong = await api.get(`${CONNECTIONS}/${other}/functions/${fn.body.data.id}/versions`);
      assert.equal(wrong.status, 404);
      assert.equal(wrong.body.error, 'not_found');
      assert.equal((await api.get(`${path}/versions/99`)).status, 404);

      // A bulk import records each new function as version 1 of type import.
      const imported = await api.post(`${CONNECTIONS}/${id}/functions/import`, {
        functions: [{ name: 'more coils', type: 'modbus.readCoils', config: { address: 3 } }],
      });
      assert.equal(imported.status, 201, imported.text);
      const importedHistory = await api.get(
        `${CONNECTIONS}/${id}/functions/${imported.body.data[0].id}/versions`,
      );
      assert.deepEqual(
        importedHistory.body.data.map((v: any) => [v.version, v.changeType]),
        [[1, 'import']],
      );
    });

    it("another organization's ids are 404 and scopes are enforced", async () => {
      const id = (await api.post(CONNECTIONS, opcua('Press 4'))).body.data.id;
      const fnId = (
        await api.post(`${CONNECTIONS}/${id}/functions`, {
          name: 'speed',
          type: 'opcua.read',
          config: { nodeId: 'ns=2;s=Speed' },
        })
      ).body.data.id;
      const org = await buildOrganization(server, 'Versions elsewhere');
      const user = await buildUser(server);
      await addMember(server, org, user.id, 'Owner');
      const outsider = await server.client.login(user.email, user.password, org);
      const rows = await versionRows();
      for (const [method, path] of [
        ['GET', `${CONNECTIONS}/${id}/versions`],
        ['GET', `${CONNECTIONS}/${id}/versions/1`],
        ['GET', `${CONNECTIONS}/${id}/versions/1/diff?against=1`],
        ['POST', `${CONNECTIONS}/${id}/versions/1/revert`],
        ['GET', `${CONNECTIONS}/${id}/functions/${fnId}/versions`],
        ['POST', `${CONNECTIONS}/${id}/functions/${fnId}/versions/1/revert`],
      ] as const) {
        const res = await outsider.request(method, path, { body: method === 'POST' ? {} : undefined });
        assert.equal(res.status, 404, `${method} ${path}: ${res.text}`);
        assert.equal(res.body.error, 'not_found');
      }
      assert.equal(await versionRows(), rows);

      const reader = server.client.as({
        token: await createPat(server.admin, ['connectors:read']),
        org: server.orgId,
      });
      assert.equal((await reader.get(`${CONNECTIONS}/${id}/versions`)).status, 200);
      const denied = await reader.post(`${CONNECTIONS}/${id}/versions/1/revert`, {});
      assert.equal(denied.status, 403);
      assert.equal(denied.body.error, 'insufficient_scope');
      assert.equal(
        (await reader.post(`${CONNECTIONS}/${id}/functions/${fnId}/versions/1/revert`, {})).status,
        403,
      );
      const none = server.client.as({
        token: await createPat(server.admin, ['uns:read']),
        org: server.orgId,
      });
      assert.equal((await none.get(`${CONNECTIONS}/${id}/versions`)).status, 403);
      assert.equal((await none.get(`${CONNECTIONS}/${id}/functions/${fnId}/versions/1`)).status, 403);
    });
  });
}
