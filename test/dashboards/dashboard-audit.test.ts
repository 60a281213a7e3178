import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type AuditEntry, auditCount, auditEntriesOf } from '../helpers/audit-log.js';
import { testDialects } from '../helpers/dialects.js';
import type { TestClient } from '../helpers/http-client.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';

const BASE = '/api/v1/uns/dashboards';
const FOLDERS = `${BASE}/folders`;

const statPanel = (over: Record<string, unknown> = {}) => ({
  type: 'stat',
  title: 'Temperature',
  gridPos: { x: 0, y: 0, w: 6, h: 4 },
  queries: [{ topic: 'v1/acme/plant1/line1/temp' }],
  ...over,
});

for (const dialect of testDialects()) {
  describe(`Dashboard and folder changes in the audit log [${dialect}]`, () => {
    let server: TestServer;
    let api: TestClient;

    const entriesOf = (targetType: string, id: string) => auditEntriesOf(api, targetType, id);
    const total = () => auditCount(api);
    const ok = async (res: Promise<{ status: number; text: string; body: any }>, status = 200) => {
      const done = await res;
      assert.equal(done.status, status, done.text);
      return done.body?.data;
    };

    before(async () => {
      server = await startTestServer(dialect);
      api = server.admin;
    });
    after(() => server?.close());

    it('records folder create, rename, move and delete', async () => {
      const a = await ok(api.post(FOLDERS, { name: 'Audit A' }), 201);
      const b = await ok(api.post(FOLDERS, { name: 'Audit B' }), 201);
      await ok(api.patch(`${FOLDERS}/${b.id}`, { name: 'Audit B2' }));
      await ok(api.patch(`${FOLDERS}/${b.id}`, { parentId: a.id }));
      await ok(api.delete(`${FOLDERS}/${b.id}`), 204);
      const entries = await entriesOf('dashboard_folder', b.id);
      assert.deepEqual(
        entries.map((e) => e.action),
        [
          'dashboard_folder.created',
          'dashboard_folder.updated',
          'dashboard_folder.moved',
          'dashboard_folder.deleted',
        ],
      );
      for (const e of entries) assert.equal(e.actor?.userId, server.adminId);
      assert.deepEqual(
        entries[1]!.changes.find((c) => c.path === '/name'),
        { path: '/name', from: 'Audit B', to: 'Audit B2' },
      );
      assert.deepEqual(
        entries[2]!.changes.find((c) => c.path === '/parentId'),
        { path: '/parentId', from: null, to: a.id },
      );
      assert.equal((entries[3]!.changes[0]!.from as { name: string }).name, 'Audit B2');
    });

    it('records dashboard create, update, move, panel changes, revert, clone and delete', async () => {
      const folder = await ok(api.post(FOLDERS, { name: 'Audit home' }), 201);
      const dash = await ok(api.post(BASE, { title: 'Audited' }), 201);
      await ok(api.patch(`${BASE}/${dash.id}`, { version: 1, title: 'Audited 2' }));
      await ok(api.patch(`${BASE}/${dash.id}`, { version: 2, folderId: folder.id }));
      const withPanel = await ok(
        api.post(`${BASE}/${dash.id}/panels`, { version: 3, panel: statPanel() }),
        201,
      );
      const panelId = withPanel.panels[0].id as string;
      await ok(api.patch(`${BASE}/${dash.id}/panels/${panelId}`, { version: 4, title: 'Hot' }));
      await ok(api.delete(`${BASE}/${dash.id}/panels/${panelId}?version=5`));
      await ok(api.post(`${BASE}/${dash.id}/versions/1/revert`));
      const copy = await ok(api.post(`${BASE}/${dash.id}/clone`, { title: 'Audited copy' }), 201);
      await ok(api.delete(`${BASE}/${dash.id}`), 204);

      const entries = await entriesOf('dashboard', dash.id);
      assert.deepEqual(
        entries.map((e) => e.action),
        [
          'dashboard.created',
          'dashboard.updated',
          'dashboard.moved',
          'dashboard.panel_added',
          'dashboard.panel_changed',
          'dashboard.panel_removed',
          'dashboard.reverted',
          'dashboard.deleted',
        ],
      );
      for (const e of entries) assert.equal(e.actor?.userId, server.adminId);
      const change = (e: AuditEntry, path: string) => e.changes.find((c) => c.path === path);
      assert.deepEqual(change(entries[1]!, '/title'), { path: '/title', from: 'Audited', to: 'Audited 2' });
      assert.deepEqual(change(entries[2]!, '/folderId'), { path: '/folderId', from: null, to: folder.id });
      assert.equal(change(entries[3]!, '/panels/0')?.from, undefined);
      assert.equal((change(entries[3]!, '/panels/0')!.to as { id: string }).id, panelId);
      assert.deepEqual(change(entries[4]!, '/panels/0/title'), {
        path: '/panels/0/title',
        from: 'Temperature',
        to: 'Hot',
      });
      assert.equal((change(entries[5]!, '/panels/0')!.from as { id: string }).id, panelId);
      assert.deepEqual(change(entries[6]!, '/title'), { path: '/title', from: 'Audited 2', to: 'Audited' });
      assert.equal((entries[7]!.changes[0]!.from as { version: number }).version, 7);
      assert.deepEqual(
        (await entriesOf('dashboard', copy.id)).map((e) => e.action),
        ['dashboard.cloned'],
      );
    });

    it('a recursive folder delete records each folder and dashboard that goes', async () => {
      const top = await ok(api.post(FOLDERS, { name: 'Audit tree' }), 201);
      const sub = await ok(api.post(FOLDERS, { name: 'Audit sub', parentId: top.id }), 201);
      const inside = await ok(api.post(BASE, { title: 'Inside', folderId: sub.id }), 201);
      await ok(api.delete(`${FOLDERS}/${top.id}?recursive=true`), 204);
      assert.equal((await entriesOf('dashboard_folder', top.id)).at(-1)?.action, 'dashboard_folder.deleted');
      assert.equal((await entriesOf('dashboard_folder', sub.id)).at(-1)?.action, 'dashboard_folder.deleted');
      const gone = (await entriesOf('dashboard', inside.id)).at(-1)!;
      assert.equal(gone.action, 'dashboard.deleted');
      assert.equal(gone.reason, 'its folder was deleted');
      assert.equal((gone.changes[0]!.from as { title: string }).title, 'Inside');
    });

    it('a refused change records nothing', async () => {
      const a = await ok(api.post(FOLDERS, { name: 'Refuse A' }), 201);
      const b = await ok(api.post(FOLDERS, { name: 'Refuse B', parentId: a.id }), 201);
      await ok(api.post(BASE, { title: 'Holds', folderId: a.id }), 201);
      const dash = await ok(api.post(BASE, { title: 'Refusals', panels: [statPanel()] }), 201);
      const start = await total();

      assert.equal((await api.post(FOLDERS, { name: 'Refuse B', parentId: a.id })).status, 409);
      assert.equal((await api.post(FOLDERS, { name: '  ' })).status, 400);
      assert.equal((await api.patch(`${FOLDERS}/${a.id}`, { parentId: b.id })).status, 400);
      assert.equal((await api.post(FOLDERS, { name: 'Refuse B' })).status, 201);
      const afterCreate = await total();
      assert.equal(afterCreate, start + 1);
      assert.equal((await api.patch(`${FOLDERS}/${b.id}`, { parentId: null })).status, 409);
      assert.equal((await api.delete(`${FOLDERS}/${a.id}`)).status, 409);
      assert.equal((await api.patch(`${BASE}/${dash.id}`, { version: 9, title: 'Stale' })).status, 409);
      assert.equal((await api.patch(`${BASE}/${dash.id}`, { version: 1, title: '' })).status, 400);
      assert.equal(
        (await api.post(`${BASE}/${dash.id}/panels`, { version: 1, panel: statPanel({ type: 'pie' }) }))
          .status,
        400,
      );
      assert.equal(
        (await api.patch(`${BASE}/${dash.id}/panels/${dash.panels[0].id}`, { version: 3, title: 'x' }))
          .status,
        409,
      );
      assert.equal((await api.delete(`${BASE}/${dash.id}/panels/pnope?version=1`)).status, 404);
      assert.equal(await total(), afterCreate);
      assert.deepEqual(
        (await entriesOf('dashboard', dash.id)).map((e) => e.action),
        ['dashboard.created'],
      );
    });
  });
}
