import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { namesIgnoreCase } from '../../src/storage/migrations/0028-names-ignore-case.js';
import { exportBundle, validate } from '../dependencies/bundle-helpers.js';
import { testDialects } from '../helpers/dialects.js';
import type { TestClient } from '../helpers/http-client.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';

const CASES = ['Press-1', 'PRESS-1', 'press-1', 'Press-1'.toUpperCase().toLowerCase() + ' ', 'pReSs-1'];

const rest = (name: string) => ({
  name,
  protocol: 'rest',
  config: { baseUrl: 'http://127.0.0.1:9/api' },
});
const pipeline = (name: string) => ({
  name,
  nodes: [{ id: 'start', name: 'Start', type: 'trigger.manual', parameters: {} }],
  edges: [],
});
const model = (name: string) => ({ name, fields: [{ name: 'current', type: 'number' }] });
const dashboard = (title: string, folderId: string | null = null) => ({ title, folderId, panels: [] });

/** Five creates at once whose names differ only in case: exactly one is made, the others are 409s naming it. */
async function raceCreates(api: TestClient, path: string, body: (name: string) => unknown, noun: string) {
  const names = ['Line-7', 'LINE-7', 'line-7', 'LiNe-7', 'lINE-7'];
  const answers = await Promise.all(names.map((name) => api.post(path, body(name))));
  const created = answers.filter((r) => r.status === 201);
  const refused = answers.filter((r) => r.status === 409);
  assert.equal(created.length, 1, answers.map((r) => `${r.status} ${r.text}`).join('\n'));
  assert.equal(refused.length, 4, answers.map((r) => `${r.status} ${r.text}`).join('\n'));
  const winner = created[0]!.body.data;
  const winnerName = winner.name ?? winner.title;
  for (const r of refused) {
    assert.equal(r.body.error, 'conflict');
    assert.ok(
      r.body.message.includes(`'${winnerName}'`) || r.body.message.includes(`"${winnerName}"`),
      r.text,
    );
    assert.ok(r.body.message.includes(noun), r.text);
  }
  return winner;
}

for (const dialect of testDialects()) {
  describe(`names unique ignoring case [${dialect}]`, () => {
    let server: TestServer;
    let api: TestClient;

    before(async () => {
      server = await startTestServer(dialect);
      api = server.admin;
    });
    after(() => server?.close());

    it('refuses a connection whose name differs only in case, naming the existing one; a rename too', async () => {
      const first = await api.post('/api/v1/connections', rest('Press-1'));
      assert.equal(first.status, 201, first.text);
      const clash = await api.post('/api/v1/connections', rest('PRESS-1'));
      assert.equal(clash.status, 409, clash.text);
      assert.equal(clash.body.error, 'conflict');
      assert.match(clash.body.message, /a connection named 'Press-1' \(id [0-9a-f-]+\) already exists/);
      assert.ok(clash.body.message.includes(first.body.data.id));
      const other = await api.post('/api/v1/connections', rest('Press-2'));
      const renamed = await api.patch(`/api/v1/connections/${other.body.data.id}`, { name: 'press-1' });
      assert.equal(renamed.status, 409, renamed.text);
      assert.equal((await api.get(`/api/v1/connections/${other.body.data.id}`)).body.data.name, 'Press-2');
      // Its own name in another case is a rename of itself, not a clash.
      const recased = await api.patch(`/api/v1/connections/${first.body.data.id}`, { name: 'PRESS-1' });
      assert.equal(recased.status, 200, recased.text);
      assert.equal(recased.body.data.name, 'PRESS-1');
      assert.equal(CASES.length, 5);
    });

    it('five concurrent creates of a connection differing only in case: one 201, four 409', async () => {
      await raceCreates(api, '/api/v1/connections', rest, 'connection');
    });

    it('function names are unique in their connection ignoring case, free in another connection', async () => {
      const a = (await api.post('/api/v1/connections', rest('Functions A'))).body.data.id;
      const b = (await api.post('/api/v1/connections', rest('Functions B'))).body.data.id;
      const fn = (name: string) => ({ name, type: 'rest.get', config: { path: '/temp' } });
      const first = await api.post(`/api/v1/connections/${a}/functions`, fn('Read temp'));
      assert.equal(first.status, 201, first.text);
      const clash = await api.post(`/api/v1/connections/${a}/functions`, fn('READ TEMP'));
      assert.equal(clash.status, 409, clash.text);
      assert.match(
        clash.body.message,
        /a function named 'Read temp' \(id [0-9a-f-]+\) already exists in this connection/,
      );
      assert.equal((await api.post(`/api/v1/connections/${b}/functions`, fn('READ TEMP'))).status, 201);
      const second = await api.post(`/api/v1/connections/${a}/functions`, fn('Read pressure'));
      const renamed = await api.patch(`/api/v1/connections/${a}/functions/${second.body.data.id}`, {
        name: 'read TEMP',
      });
      assert.equal(renamed.status, 409, renamed.text);
      const imported = await api.post(`/api/v1/connections/${a}/functions/import`, {
        functions: [fn('read temp')],
      });
      assert.equal(imported.status, 400, imported.text);
      await raceCreates(api, `/api/v1/connections/${b}/functions`, fn, 'function');
    });

    it('pipelines and models: five concurrent creates differing only in case give one 201', async () => {
      await raceCreates(api, '/api/v1/engine/pipelines', pipeline, 'pipeline');
      await raceCreates(api, '/api/v1/engine/models', model, 'model');
    });

    it('dashboard titles are unique in their folder ignoring case; the same title in another folder is fine', async () => {
      const plant = (await api.post('/api/v1/uns/dashboards/folders', { name: 'Plant' })).body.data.id;
      const first = await api.post('/api/v1/uns/dashboards', dashboard('Overview', plant));
      assert.equal(first.status, 201, first.text);
      const clash = await api.post('/api/v1/uns/dashboards', dashboard('OVERVIEW', plant));
      assert.equal(clash.status, 409, clash.text);
      assert.match(
        clash.body.message,
        /a dashboard titled 'Overview' \(id [0-9a-f-]+\) already exists in this folder/,
      );
      const top = await api.post('/api/v1/uns/dashboards', dashboard('OVERVIEW'));
      assert.equal(top.status, 201, top.text);
      // Moving the top one into Plant meets the title there.
      const moved = await api.patch(`/api/v1/uns/dashboards/${top.body.data.id}`, {
        folderId: plant,
        version: 1,
      });
      assert.equal(moved.status, 409, moved.text);
      // Two clones without a title get titles of their own.
      const c1 = await api.post(`/api/v1/uns/dashboards/${first.body.data.id}/clone`, {});
      const c2 = await api.post(`/api/v1/uns/dashboards/${first.body.data.id}/clone`, {});
      assert.equal(c1.status, 201, c1.text);
      assert.equal(c2.status, 201, c2.text);
      assert.equal(c1.body.data.title, 'Overview (copy)');
      assert.equal(c2.body.data.title, 'Overview (copy) (2)');
      await raceCreates(api, '/api/v1/uns/dashboards', (t) => dashboard(t, plant), 'dashboard');
      await raceCreates(api, '/api/v1/uns/dashboards', (t) => dashboard(t), 'dashboard');
    });

    it('folder names are unique among their siblings ignoring case', async () => {
      const area = (await api.post('/api/v1/uns/dashboards/folders', { name: 'Area' })).body.data.id;
      const first = await api.post('/api/v1/uns/dashboards/folders', { name: 'Lines', parentId: area });
      assert.equal(first.status, 201, first.text);
      const clash = await api.post('/api/v1/uns/dashboards/folders', { name: 'LINES', parentId: area });
      assert.equal(clash.status, 409, clash.text);
      assert.match(
        clash.body.message,
        /a folder named "Lines" \(id [0-9a-f-]+\) already exists in that folder/,
      );
      assert.equal((await api.post('/api/v1/uns/dashboards/folders', { name: 'LINES' })).status, 201);
      await raceCreates(
        api,
        '/api/v1/uns/dashboards/folders',
        (name) => ({ name, parentId: area }),
        'folder',
      );
    });

    it('two clones of a connection without a name get names of their own', async () => {
      const source = (await api.post('/api/v1/connections', rest('Clone me'))).body.data.id;
      const c1 = await api.post(`/api/v1/connections/${source}/clone`, {});
      const c2 = await api.post(`/api/v1/connections/${source}/clone`, {});
      assert.equal(c1.status, 201, c1.text);
      assert.equal(c2.status, 201, c2.text);
      assert.deepEqual([c1.body.data.name, c2.body.data.name], ['Clone me (copy)', 'Clone me (copy) (2)']);
      const named = await api.post(`/api/v1/connections/${source}/clone`, { name: 'CLONE ME' });
      assert.equal(named.status, 409, named.text);
    });

    it('an import matching by name finds a connection and its function whose names differ in case', async () => {
      const id = (await api.post('/api/v1/connections', rest('Gateway 9'))).body.data.id;
      const fnId = (
        await api.post(`/api/v1/connections/${id}/functions`, {
          name: 'read level',
          type: 'rest.get',
          config: { path: '/level' },
        })
      ).body.data.id;
      const { bundle } = await exportBundle(api, { select: [{ type: 'connection', id }] });
      assert.equal((await api.patch(`/api/v1/connections/${id}`, { name: 'GATEWAY 9' })).status, 200);
      assert.equal(
        (await api.patch(`/api/v1/connections/${id}/functions/${fnId}`, { name: 'READ LEVEL' })).status,
        200,
      );
      const plan = await validate(api, bundle, { match: 'name', conflict: 'overwrite' });
      const connection = plan.actions.find((a: { type: string }) => a.type === 'connection');
      const fn = plan.actions.find((a: { type: string }) => a.type === 'function');
      assert.equal(connection.targetId, id, JSON.stringify(plan.actions));
      assert.equal(connection.action, 'update');
      assert.equal(fn.targetId, fnId, JSON.stringify(plan.actions));
      assert.equal(fn.action, 'update');
    });

    it('migration 0028 renames later duplicates (the oldest keeps its name) and records each in the audit log', async () => {
      const db = server.storage.db;
      for (const index of [
        'connections_name_ci_uq',
        'connection_functions_name_ci_uq',
        'dashboards_title_ci_uq',
        'dashboard_folders_name_ci_uq',
      ])
        await sql`drop index ${sql.ref(index)}`.execute(db);
      const older = (await api.post('/api/v1/connections', rest('Dup line'))).body.data.id;
      const newer = (await api.post('/api/v1/connections', rest('Dup line x'))).body.data.id;
      const taken = (await api.post('/api/v1/connections', rest('DUP LINE (2)'))).body.data.id;
      await db.updateTable('connections').set({ name: 'dup LINE' }).where('id', '=', newer).execute();
      const f1 = (
        await api.post(`/api/v1/connections/${older}/functions`, {
          name: 'f',
          type: 'rest.get',
          config: { path: '/a' },
        })
      ).body.data.id;
      const f2 = (
        await api.post(`/api/v1/connections/${older}/functions`, {
          name: 'g',
          type: 'rest.get',
          config: { path: '/b' },
        })
      ).body.data.id;
      await db.updateTable('connection_functions').set({ name: 'F' }).where('id', '=', f2).execute();
      const d1 = (await api.post('/api/v1/uns/dashboards', dashboard('Dup board'))).body.data.id;
      const d2 = (await api.post('/api/v1/uns/dashboards', dashboard('Dup board 2'))).body.data.id;
      await db.updateTable('dashboards').set({ title: 'DUP BOARD' }).where('id', '=', d2).execute();
      const g1 = (await api.post('/api/v1/uns/dashboards/folders', { name: 'Dup folder' })).body.data.id;
      const g2 = (await api.post('/api/v1/uns/dashboards/folders', { name: 'Dup folder 2' })).body.data.id;
      await db.updateTable('dashboard_folders').set({ name: 'dup folder' }).where('id', '=', g2).execute();

      await namesIgnoreCase.up(db, server.storage.dialect);

      const nameOf = async (
        table: 'connections' | 'connection_functions' | 'dashboard_folders',
        id: string,
      ) => (await db.selectFrom(table).select('name').where('id', '=', id).executeTakeFirstOrThrow()).name;
      assert.equal(await nameOf('connections', older), 'Dup line');
      assert.equal(await nameOf('connections', taken), 'DUP LINE (2)');
      assert.equal(await nameOf('connections', newer), 'dup LINE (3)');
      assert.equal(await nameOf('connection_functions', f1), 'f');
      assert.equal(await nameOf('connection_functions', f2), 'F (2)');
      assert.equal(await nameOf('dashboard_folders', g1), 'Dup folder');
      assert.equal(await nameOf('dashboard_folders', g2), 'dup folder (2)');
      const board = await db
        .selectFrom('dashboards')
        .select('title')
        .where('id', '=', d2)
        .executeTakeFirstOrThrow();
      assert.equal(board.title, 'DUP BOARD (2)');
      assert.equal(
        (await db.selectFrom('dashboards').select('title').where('id', '=', d1).executeTakeFirstOrThrow())
          .title,
        'Dup board',
      );
      const entry = await db
        .selectFrom('audit_log')
        .selectAll()
        .where('action', '=', 'connection.renamed')
        .where('target_id', '=', newer)
        .executeTakeFirstOrThrow();
      assert.equal(entry.organization_id, server.orgId);
      assert.deepEqual(JSON.parse(entry.details!).changes, [
        { path: '/name', from: 'dup LINE', to: 'dup LINE (3)' },
      ]);
      // The indexes are back: a duplicate written straight to the table is refused by the database.
      await assert.rejects(
        db.updateTable('connections').set({ name: 'DUP LINE' }).where('id', '=', taken).execute(),
      );
    });
  });
}
