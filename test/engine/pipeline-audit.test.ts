import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type AuditEntry, auditEntriesOf, auditCount as countAudit } from '../helpers/audit-log.js';
import { testDialects } from '../helpers/dialects.js';
import type { TestClient } from '../helpers/http-client.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';
import { createPat } from '../uns/uns-helpers.js';

const PIPELINES = '/api/v1/engine/pipelines';
const manual = { id: 'start', name: 'Start', type: 'trigger.manual' };
const jsonata = { id: 'j', name: 'J', type: 'transform.jsonata', parameters: { expression: '$' } };

for (const dialect of testDialects()) {
  describe(`Pipeline changes in the audit log [${dialect}]`, () => {
    let server: TestServer;
    let api: TestClient;

    const entriesOf = (id: string) => auditEntriesOf(server.admin, 'pipeline', id);
    const auditCount = () => countAudit(server.admin, 'pipeline');

    before(async () => {
      server = await startTestServer(dialect);
      api = server.client.as({
        token: await createPat(server.admin, ['pipelines:read', 'pipelines:write']),
        org: server.orgId,
      });
    });
    after(() => server?.close());

    it('records create, update, enable, disable, revert, clone and delete with actor and paths', async () => {
      const made = await api.post(PIPELINES, { name: 'Audited flow', nodes: [manual] });
      assert.equal(made.status, 201, made.text);
      const id = made.body.data.id as string;
      const put = await api.put(`${PIPELINES}/${id}`, {
        name: 'Audited flow',
        description: 'now with a transform',
        nodes: [manual, jsonata],
        edges: [{ source: 'start', target: 'j' }],
        version: 1,
      });
      assert.equal(put.status, 200, put.text);
      assert.equal((await api.post(`${PIPELINES}/${id}/enable`)).status, 200);
      assert.equal((await api.post(`${PIPELINES}/${id}/disable`)).status, 200);
      assert.equal((await api.post(`${PIPELINES}/${id}/versions/1/revert`)).status, 200);
      const clone = await api.post(`${PIPELINES}/${id}/clone`, { name: 'Audited flow copy' });
      assert.equal(clone.status, 201, clone.text);
      assert.equal((await api.delete(`${PIPELINES}/${id}`)).status, 204);

      const entries = await entriesOf(id);
      assert.deepEqual(
        entries.map((e) => e.action),
        [
          'pipeline.created',
          'pipeline.updated',
          'pipeline.enabled',
          'pipeline.disabled',
          'pipeline.reverted',
          'pipeline.deleted',
        ],
      );
      for (const entry of entries) {
        assert.equal(entry.targetType, 'pipeline');
        assert.equal(entry.actor?.userId, server.adminId);
      }
      const change = (e: AuditEntry, path: string) => e.changes.find((c) => c.path === path);
      assert.equal(entries[0]!.changes.length, 1);
      assert.equal(entries[0]!.changes[0]!.from, null);
      assert.equal((entries[0]!.changes[0]!.to as { name: string }).name, 'Audited flow');
      assert.deepEqual(change(entries[1]!, '/description'), {
        path: '/description',
        from: null,
        to: 'now with a transform',
      });
      assert.equal((change(entries[1]!, '/nodes/1')!.to as { id: string }).id, 'j');
      assert.deepEqual(change(entries[1]!, '/version'), { path: '/version', from: 1, to: 2 });
      assert.deepEqual(change(entries[2]!, '/enabled'), { path: '/enabled', from: false, to: true });
      assert.deepEqual(change(entries[3]!, '/enabled'), { path: '/enabled', from: true, to: false });
      assert.equal((change(entries[4]!, '/nodes/1')!.from as { id: string }).id, 'j');
      assert.equal(entries[5]!.changes[0]!.to, null);
      assert.equal((entries[5]!.changes[0]!.from as { version: number }).version, 5);
      assert.deepEqual(
        (await entriesOf(clone.body.data.id)).map((e) => e.action),
        ['pipeline.cloned'],
      );
    });

    it('a refused change records nothing', async () => {
      const made = await api.post(PIPELINES, { name: 'Refusals', nodes: [jsonata] });
      assert.equal(made.status, 201, made.text);
      const id = made.body.data.id as string;
      const start = await auditCount();
      assert.equal((await api.post(PIPELINES, { name: 'x' })).status, 400);
      assert.equal((await api.post(PIPELINES, { name: 'Refusals' })).status, 409);
      assert.equal((await api.put(`${PIPELINES}/${id}`, { name: 'Refusals', version: 7 })).status, 409);
      // Enabling a graph without a trigger is refused.
      assert.equal((await api.post(`${PIPELINES}/${id}/enable`)).status, 400);
      assert.equal((await api.delete(`${PIPELINES}/00000000-0000-4000-8000-000000000000`)).status, 404);
      assert.equal(await auditCount(), start);
    });
  });
}
