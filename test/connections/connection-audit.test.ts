import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type AuditEntry, auditEntriesOf, auditCount as countAudit } from '../helpers/audit-log.js';
import { testDialects } from '../helpers/dialects.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';

const CONNECTIONS = '/api/v1/connections';
const SECRET = 'audit-S3cret-pw-7d41e0';
const NEW_SECRET = 'audit-N3w-passw0rd-c29ab8';
const TOKEN = 'audit-B3arer-token-51fe02';

for (const dialect of testDialects()) {
  describe(`Connection changes in the audit log [${dialect}]`, () => {
    let server: TestServer;

    const entriesOf = (id: string) => auditEntriesOf(server.admin, 'connection', id);
    const auditCount = () => countAudit(server.admin, 'connection');

    before(async () => {
      server = await startTestServer(dialect);
    });
    after(() => server?.close());

    it('records create, update, start, stop, restart, clone, functions and delete with actor, reason and paths', async () => {
      const api = server.admin;
      const made = await api.post(CONNECTIONS, {
        name: 'Audited REST',
        protocol: 'rest',
        config: { baseUrl: 'http://127.0.0.1:9/api', username: 'svc', password: SECRET },
      });
      assert.equal(made.status, 201, made.text);
      const id = made.body.data.id as string;
      const updated = await api.patch(`${CONNECTIONS}/${id}`, {
        description: 'line 2 gateway',
        config: {
          baseUrl: 'http://127.0.0.1:9/v2',
          username: 'svc',
          password: NEW_SECRET,
          bearerToken: TOKEN,
        },
        reason: 'gateway moved to v2',
      });
      assert.equal(updated.status, 200, updated.text);
      const fn = await api.post(`${CONNECTIONS}/${id}/functions`, {
        name: 'status',
        type: 'rest.get',
        config: { path: '/status' },
      });
      assert.equal(fn.status, 201, fn.text);
      const fnId = fn.body.data.id as string;
      assert.equal(
        (await api.patch(`${CONNECTIONS}/${id}/functions/${fnId}`, { config: { path: '/state' } })).status,
        200,
      );
      const imported = await api.post(`${CONNECTIONS}/${id}/functions/import`, {
        functions: [{ name: 'a', type: 'rest.get', config: { path: '/a' } }],
      });
      assert.ok(imported.status === 201 || imported.status === 200, imported.text);
      const fnClone = await api.post(`${CONNECTIONS}/${id}/functions/${fnId}/clone`, { name: 'status 2' });
      assert.equal(fnClone.status, 201, fnClone.text);
      assert.equal((await api.delete(`${CONNECTIONS}/${id}/functions/${fnId}`)).status, 204);
      assert.equal((await api.post(`${CONNECTIONS}/${id}/start`, { reason: 'commissioning' })).status, 202);
      const restarted = await api.post(`${CONNECTIONS}/${id}/restart`);
      assert.equal(restarted.status, 202, restarted.text);
      assert.equal((await api.post(`${CONNECTIONS}/${id}/stop`, { reason: 'night shift' })).status, 202);
      const cloned = await api.post(`${CONNECTIONS}/${id}/clone`, { name: 'Audited REST copy' });
      assert.equal(cloned.status, 201, cloned.text);
      assert.equal((await api.delete(`${CONNECTIONS}/${id}`)).status, 204);

      const entries = await entriesOf(id);
      assert.deepEqual(
        entries.map((e) => e.action),
        [
          'connection.created',
          'connection.updated',
          'connection.function_created',
          'connection.function_updated',
          'connection.functions_imported',
          'connection.function_cloned',
          'connection.function_deleted',
          'connection.started',
          'connection.restarted',
          'connection.stopped',
          'connection.deleted',
        ],
      );
      for (const entry of entries) {
        assert.equal(entry.targetType, 'connection');
        assert.equal(entry.actor?.userId, server.adminId);
      }
      const byAction = (action: string) => entries.find((e) => e.action === `connection.${action}`)!;
      const change = (e: AuditEntry, path: string) => e.changes.find((c) => c.path === path);

      const created = byAction('created').changes;
      assert.equal(created.length, 1);
      assert.equal((created[0]!.to as { config: { password: string } }).config.password, '[secret]');
      assert.equal((created[0]!.to as { name: string }).name, 'Audited REST');

      const update = byAction('updated');
      assert.equal(update.reason, 'gateway moved to v2');
      assert.deepEqual(change(update, '/description'), {
        path: '/description',
        from: '',
        to: 'line 2 gateway',
      });
      assert.deepEqual(change(update, '/config/baseUrl'), {
        path: '/config/baseUrl',
        from: 'http://127.0.0.1:9/api',
        to: 'http://127.0.0.1:9/v2',
      });
      // The secrets changed: recorded as changed, never with their values.
      assert.deepEqual(change(update, '/config/password'), {
        path: '/config/password',
        from: '[secret]',
        to: '[secret]',
      });
      assert.deepEqual(change(update, '/config/bearerToken'), {
        path: '/config/bearerToken',
        to: '[secret]',
      });

      const fnCreated = change(byAction('function_created'), `/functions/${fnId}`)!;
      assert.equal(fnCreated.from, undefined);
      assert.equal((fnCreated.to as { name: string }).name, 'status');
      assert.deepEqual(change(byAction('function_updated'), `/functions/${fnId}/config/path`), {
        path: `/functions/${fnId}/config/path`,
        from: '/status',
        to: '/state',
      });
      assert.equal(byAction('functions_imported').changes.length, 1);
      assert.equal(
        (byAction('function_deleted').changes[0]!.from as { config: { path: string } }).config.path,
        '/state',
      );
      assert.equal(byAction('started').reason, 'commissioning');
      assert.deepEqual(byAction('started').changes, [
        { path: '/desiredState', from: 'stopped', to: 'running' },
      ]);
      assert.deepEqual(byAction('restarted').changes, []);
      assert.equal(byAction('stopped').reason, 'night shift');
      assert.deepEqual(byAction('stopped').changes, [
        { path: '/desiredState', from: 'running', to: 'stopped' },
      ]);
      const deleted = byAction('deleted').changes;
      assert.equal(deleted.length, 1);
      assert.equal(deleted[0]!.to, null);
      assert.equal((deleted[0]!.from as { config: { bearerToken: string } }).config.bearerToken, '[secret]');

      const clone = await entriesOf(cloned.body.data.id);
      assert.deepEqual(
        clone.map((e) => e.action),
        ['connection.cloned'],
      );
      const cloneView = clone[0]!.changes[0]!.to as { clonedFrom: string; config: { bearerToken: string } };
      assert.equal(cloneView.clonedFrom, id);
      assert.equal(cloneView.config.bearerToken, '[secret]');

      // No stored audit row holds either secret, in any column.
      const rows = await server.storage.db.selectFrom('audit_log').selectAll().execute();
      const text = JSON.stringify(rows);
      assert.ok(rows.length >= entries.length);
      assert.ok(!text.includes(SECRET), 'the first password is in an audit row');
      assert.ok(!text.includes(NEW_SECRET), 'the second password is in an audit row');
      assert.ok(!text.includes(TOKEN), 'the bearer token is in an audit row');
    });

    it('a refused change records nothing', async () => {
      const api = server.admin;
      const made = await api.post(CONNECTIONS, {
        name: 'Refusals',
        protocol: 'rest',
        config: { baseUrl: 'http://127.0.0.1:9' },
      });
      assert.equal(made.status, 201, made.text);
      const id = made.body.data.id as string;
      const start = await auditCount();
      assert.equal((await api.post(CONNECTIONS, { name: 'x', protocol: 'nope', config: {} })).status, 400);
      assert.equal(
        (await api.post(CONNECTIONS, { name: 'Refusals', protocol: 'rest', config: { baseUrl: 'http://a' } }))
          .status,
        409,
      );
      assert.equal((await api.patch(`${CONNECTIONS}/${id}`, { config: { baseUrl: 'ftp://x' } })).status, 400);
      assert.equal((await api.patch(`${CONNECTIONS}/${id}`, { reason: '   ' })).status, 400);
      assert.equal((await api.patch(`${CONNECTIONS}/${id}`, { reason: 'x'.repeat(501) })).status, 400);
      assert.equal((await api.post(`${CONNECTIONS}/${id}/start`, { reason: '' })).status, 400);
      assert.equal(
        (await api.post(`${CONNECTIONS}/${id}/functions`, { name: 'f', type: 'modbus.read', config: {} }))
          .status,
        400,
      );
      assert.equal(
        (
          await api.post(`${CONNECTIONS}/${id}/functions/import`, {
            functions: [
              { name: 'ok', type: 'rest.get', config: { path: '/a' } },
              { name: 'bad', type: 'rest.get', config: {} },
            ],
          })
        ).status,
        400,
      );
      assert.equal((await api.delete(`${CONNECTIONS}/00000000-0000-4000-8000-000000000000`)).status, 404);
      assert.equal(await auditCount(), start);
      const view = await api.get(`${CONNECTIONS}/${id}`);
      assert.equal(view.body.data.desiredState, 'stopped');
    });
  });
}
