import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { AUDIT, type AuditEntry, auditEntriesOf, auditCount as countAudit } from '../helpers/audit-log.js';
import { testDialects } from '../helpers/dialects.js';
import type { TestClient } from '../helpers/http-client.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';
import { createPat } from '../uns/uns-helpers.js';

const MODELS = '/api/v1/engine/models';

for (const dialect of testDialects()) {
  describe(`Model changes in the audit log [${dialect}]`, () => {
    let server: TestServer;
    let api: TestClient;

    const entriesOf = (id: string) => auditEntriesOf(server.admin, 'model', id);
    const auditCount = () => countAudit(server.admin, 'model');

    before(async () => {
      server = await startTestServer(dialect);
      api = server.client.as({
        token: await createPat(server.admin, ['models:read', 'models:write']),
        org: server.orgId,
      });
    });
    after(() => server?.close());

    it('records create, update, revert, bind, rebind, unbind, clone and delete with actor and paths', async () => {
      const made = await api.post(MODELS, { name: 'Audited', fields: [{ name: 'a', type: 'number' }] });
      assert.equal(made.status, 201, made.text);
      const id = made.body.data.id as string;
      const updated = await api.put(`${MODELS}/${id}`, {
        version: 1,
        name: 'Audited',
        description: 'now described',
        fields: [{ name: 'a', type: 'number', unit: 'kPa' }],
      });
      assert.equal(updated.status, 200, updated.text);
      assert.equal((await api.post(`${MODELS}/${id}/versions/1/revert`)).status, 200);
      const bound = await api.post(`${MODELS}/${id}/bindings`, { topicPrefix: 'v1/acme/audit/m1' });
      assert.equal(bound.status, 201, bound.text);
      const rebound = await api.post(`${MODELS}/${id}/bindings`, {
        topicPrefix: 'v1/acme/audit/m1',
        mode: 'strict',
      });
      assert.equal(rebound.status, 200, rebound.text);
      assert.equal((await api.delete(`${MODELS}/${id}/bindings/${bound.body.data.id}`)).status, 204);
      const cloned = await api.post(`${MODELS}/${id}/clone`, { name: 'Audited copy' });
      assert.equal(cloned.status, 201, cloned.text);
      assert.equal((await api.delete(`${MODELS}/${id}`)).status, 204);

      const entries = await entriesOf(id);
      assert.deepEqual(
        entries.map((e) => e.action),
        [
          'model.created',
          'model.updated',
          'model.reverted',
          'model.bound',
          'model.rebound',
          'model.unbound',
          'model.deleted',
        ],
      );
      for (const entry of entries) {
        assert.equal(entry.targetType, 'model');
        assert.equal(entry.targetId, id);
        assert.equal(entry.actor?.userId, server.adminId);
      }
      const paths = (e: AuditEntry) => e.changes.map((c) => c.path);
      const created = entries[0]!.changes;
      assert.equal(created.length, 1);
      assert.equal(created[0]!.path, '');
      assert.equal(created[0]!.from, null);
      assert.equal((created[0]!.to as { name: string }).name, 'Audited');
      const update = entries[1]!;
      assert.deepEqual(
        update.changes.find((c) => c.path === '/description'),
        { path: '/description', from: null, to: 'now described' },
      );
      assert.deepEqual(
        update.changes.find((c) => c.path === '/fields/0/unit'),
        { path: '/fields/0/unit', to: 'kPa' },
      );
      assert.deepEqual(
        update.changes.find((c) => c.path === '/version'),
        { path: '/version', from: 1, to: 2 },
      );
      assert.ok(paths(entries[2]!).includes('/fields/0/unit'));
      assert.deepEqual(
        entries[4]!.changes.find((c) => c.path === '/mode'),
        { path: '/mode', from: 'normal', to: 'strict' },
      );
      const deleted = entries[6]!.changes;
      assert.equal(deleted.length, 1);
      assert.equal(deleted[0]!.to, null);
      assert.equal((deleted[0]!.from as { name: string; version: number }).version, 3);

      const clone = await entriesOf(cloned.body.data.id);
      assert.deepEqual(
        clone.map((e) => e.action),
        ['model.cloned'],
      );
      const filtered = await server.admin.get(`${AUDIT}?action=model.&targetType=model`);
      assert.equal(filtered.status, 200);
      assert.ok((filtered.body.data as AuditEntry[]).every((e) => e.action.startsWith('model.')));
    });

    it('a refused change records nothing', async () => {
      const made = await api.post(MODELS, { name: 'Refusals', fields: [{ name: 'a', type: 'number' }] });
      assert.equal(made.status, 201, made.text);
      const id = made.body.data.id as string;
      const bound = await api.post(`${MODELS}/${id}/bindings`, { topicPrefix: 'v1/acme/audit/refusals' });
      assert.equal(bound.status, 201, bound.text);
      const start = await auditCount();

      assert.equal((await api.post(MODELS, { name: 'x' })).status, 400);
      assert.equal((await api.post(MODELS, { name: 'Refusals' })).status, 409);
      assert.equal((await api.put(`${MODELS}/${id}`, { version: 7, name: 'Refusals' })).status, 409);
      assert.equal(
        (
          await api.put(`${MODELS}/${id}`, {
            version: 1,
            name: 'Refusals',
            fields: [{ name: 'a', type: 'string' }],
          })
        ).status,
        409,
      );
      assert.equal(
        (await api.put(`${MODELS}/${id}`, { version: 1, name: 'Refusals', labels: 'x' })).status,
        400,
      );
      assert.equal((await api.post(`${MODELS}/${id}/clone`, { name: 'Refusals' })).status, 409);
      assert.equal((await api.delete(`${MODELS}/${id}`)).status, 409);
      assert.equal((await api.post(`${MODELS}/${id}/bindings`, { topicPrefix: 'not/v1' })).status, 400);

      assert.equal(await auditCount(), start);
      assert.deepEqual(
        (await entriesOf(id)).map((e) => e.action),
        ['model.created', 'model.bound'],
      );
    });
  });
}
