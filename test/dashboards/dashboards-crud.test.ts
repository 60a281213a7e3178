import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { testDialects } from '../helpers/dialects.js';
import { buildOrganization, signedInMember } from '../helpers/factories.js';
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
  describe(`Dashboards: folders, dashboards, panels, versions [${dialect}]`, () => {
    let server: TestServer;
    let api: TestClient;

    const create = async (body: Record<string, unknown>) => {
      const res = await api.post(BASE, body);
      assert.equal(res.status, 201, res.text);
      return res.body.data;
    };
    const count = async () => {
      const row = await server.storage.db
        .selectFrom('dashboards')
        .select((eb) => eb.fn.countAll().as('n'))
        .executeTakeFirst();
      return Number(row?.n ?? 0);
    };

    before(async () => {
      server = await startTestServer(dialect);
      api = server.admin;
    });
    after(() => server?.close());

    it('creates nested folders with names unique among siblings', async () => {
      const plant = await api.post(FOLDERS, { name: 'Plant 1' });
      assert.equal(plant.status, 201, plant.text);
      const lines = await api.post(FOLDERS, { name: 'Lines', parentId: plant.body.data.id });
      assert.equal(lines.status, 201, lines.text);
      assert.equal(lines.body.data.parentId, plant.body.data.id);
      // The same name elsewhere is fine; beside itself it is not.
      assert.equal((await api.post(FOLDERS, { name: 'Lines' })).status, 201);
      const twice = await api.post(FOLDERS, { name: 'Lines', parentId: plant.body.data.id });
      assert.equal(twice.status, 409);
      assert.match(twice.body.message, /^name: /);
      const bad = await api.post(FOLDERS, { name: 'x', parentId: '00000000-0000-4000-8000-000000000000' });
      assert.equal(bad.status, 400);
      assert.match(bad.body.message, /^parentId: /);
      // A folder cannot move below itself.
      const loop = await api.patch(`${FOLDERS}/${plant.body.data.id}`, { parentId: lines.body.data.id });
      assert.equal(loop.status, 400);
      assert.match(loop.body.message, /^parentId: /);
    });

    it('renames and moves folders, refusing a sibling name and nesting past five levels', async () => {
      const a = (await api.post(FOLDERS, { name: 'Area A' })).body.data;
      const b = (await api.post(FOLDERS, { name: 'Area B' })).body.data;
      const clash = await api.patch(`${FOLDERS}/${b.id}`, { name: 'Area A' });
      assert.equal(clash.status, 409);
      assert.match(clash.body.message, /^name: /);
      const moved = await api.patch(`${FOLDERS}/${b.id}`, { parentId: a.id, name: 'Area B2' });
      assert.equal(moved.status, 200, moved.text);
      assert.equal(moved.body.data.parentId, a.id);
      assert.equal(moved.body.data.name, 'Area B2');
      let parent = b.id;
      for (let depth = 3; depth <= 5; depth++) {
        const res = await api.post(FOLDERS, { name: `Level ${depth}`, parentId: parent });
        assert.equal(res.status, 201, res.text);
        parent = res.body.data.id;
      }
      const deep = await api.post(FOLDERS, { name: 'Level 6', parentId: parent });
      assert.equal(deep.status, 400);
      assert.match(deep.body.message, /^parentId: folders nest at most 5 deep/);
      const blank = await api.patch(`${FOLDERS}/${a.id}`, { name: '  ' });
      assert.equal(blank.status, 400);
      assert.match(blank.body.message, /^name must be 1 to 100/);
    });

    it('refuses to delete a folder that holds dashboards unless recursive', async () => {
      const top = (await api.post(FOLDERS, { name: 'To delete' })).body.data;
      const sub = (await api.post(FOLDERS, { name: 'Sub', parentId: top.id })).body.data;
      const dash = await create({ title: 'Inside', folderId: sub.id });
      const refused = await api.delete(`${FOLDERS}/${top.id}`);
      assert.equal(refused.status, 409);
      assert.match(refused.body.message, /recursive=true/);
      assert.equal((await api.get(`${BASE}/${dash.id}`)).status, 200);
      const gone = await api.delete(`${FOLDERS}/${top.id}?recursive=true`);
      assert.equal(gone.status, 204, gone.text);
      assert.equal((await api.get(`${BASE}/${dash.id}`)).status, 404);
      assert.equal((await api.get(`${FOLDERS}/${sub.id}`)).status, 404);
      assert.equal((await api.get(`${BASE}/${dash.id}/versions`)).status, 404);
      const empty = (await api.post(FOLDERS, { name: 'Empty' })).body.data;
      assert.equal((await api.delete(`${FOLDERS}/${empty.id}`)).status, 204);
    });

    it('creates a dashboard with defaults and panel ids, recorded as version 1', async () => {
      const dash = await create({
        title: '  Line overview ',
        tags: ['line', 'ops', 'line'],
        panels: [
          statPanel(),
          { type: 'text', gridPos: { x: 6, y: 0, w: 6, h: 4 }, options: { content: '# Hi <b>' } },
        ],
      });
      assert.equal(dash.title, 'Line overview');
      assert.deepEqual(dash.tags, ['line', 'ops']);
      assert.deepEqual(dash.timeRange, { from: 'now-6h', to: 'now' });
      assert.equal(dash.refresh, 'off');
      assert.equal(dash.version, 1);
      assert.equal(dash.panels.length, 2);
      assert.match(dash.panels[0].id, /^p[0-9a-f]{10}$/);
      assert.notEqual(dash.panels[0].id, dash.panels[1].id);
      const versions = await api.get(`${BASE}/${dash.id}/versions`);
      assert.equal(versions.status, 200);
      assert.deepEqual(
        versions.body.data.map((v: { version: number; changeType: string }) => [v.version, v.changeType]),
        [[1, 'create']],
      );
    });

    const badInputs: [string, Record<string, unknown>, RegExp][] = [
      [
        'a panel outside the 24-column grid',
        { panels: [statPanel({ gridPos: { x: 20, y: 0, w: 8, h: 4 } })] },
        /^panels\[0\]\.gridPos: x \+ w must be at most 24/,
      ],
      [
        'a panel wider than the grid',
        { panels: [statPanel({ gridPos: { x: 0, y: 0, w: 25, h: 4 } })] },
        /^panels\[0\]\.gridPos\.w /,
      ],
      [
        'a panel of no height',
        { panels: [statPanel({ gridPos: { x: 0, y: 0, w: 4, h: 0 } })] },
        /^panels\[0\]\.gridPos\.h /,
      ],
      [
        'an unknown panel type',
        { panels: [statPanel({ type: 'pie' })] },
        /^panels\[0\]\.type must be one of timeseries, stat/,
      ],
      [
        'an unknown variable',
        { panels: [statPanel({ queries: [{ topic: 'v1/acme/$line/temp' }] })] },
        /^panels\[0\]\.queries\[0\]\.topic: unknown variable \$line/,
      ],
      [
        'a relative time range backwards',
        { timeRange: { from: 'now', to: 'now-6h' } },
        /^timeRange: from must be earlier than to/,
      ],
      [
        'a malformed time',
        { timeRange: { from: 'yesterday', to: 'now' } },
        /^timeRange\.from must be now, now-<n>/,
      ],
      ['an impossible date', { timeRange: { from: '2026-02-30T00:00:00Z', to: 'now' } }, /^timeRange\.from /],
      ['a title too long', { title: 'x'.repeat(101) }, /^title /],
      ['a blank title', { title: '   ' }, /^title must be 1 to 100/],
      ['an unknown refresh', { refresh: '2s' }, /^refresh must be one of off, 5s/],
      [
        'a query with topic and filter',
        { panels: [statPanel({ queries: [{ topic: 'v1/a/b', filter: 'v1/a/+' }] })] },
        /^panels\[0\]\.queries\[0\]: give either topic or filter/,
      ],
      [
        'a topic with a wildcard',
        { panels: [statPanel({ queries: [{ topic: 'v1/a/+' }] })] },
        /^panels\[0\]\.queries\[0\]\.topic must not contain the wildcards/,
      ],
      [
        'a topic without the prefix',
        { panels: [statPanel({ queries: [{ topic: 'plant/a/b' }] })] },
        /^panels\[0\]\.queries\[0\]\.topic /,
      ],
      [
        'a bad field path',
        { panels: [statPanel({ queries: [{ topic: 'v1/a/b', field: 'a..b' }] })] },
        /^panels\[0\]\.queries\[0\]\.field must be a path/,
      ],
      [
        'thresholds out of order',
        {
          panels: [
            statPanel({
              fieldConfig: {
                thresholds: [
                  { value: 5, color: 'red' },
                  { value: 1, color: 'green' },
                ],
              },
            }),
          ],
        },
        /^panels\[0\]\.fieldConfig\.thresholds\[1\]\.value must be greater/,
      ],
      [
        'a bad colour',
        { panels: [statPanel({ fieldConfig: { thresholds: [{ value: 5, color: 'rgb(1,2,3)' }] } })] },
        /^panels\[0\]\.fieldConfig\.thresholds\[0\]\.color must be a colour/,
      ],
      [
        'min not below max',
        { panels: [statPanel({ fieldConfig: { min: 10, max: 10 } })] },
        /^panels\[0\]\.fieldConfig\.max must be greater than min/,
      ],
      [
        'a mapping with value and range',
        { panels: [statPanel({ fieldConfig: { mappings: [{ value: 1, from: 0, text: 'x' }] } })] },
        /^panels\[0\]\.fieldConfig\.mappings\[0\]: give either value or a range/,
      ],
      [
        'a text panel with queries',
        { panels: [{ type: 'text', gridPos: { x: 0, y: 0, w: 4, h: 2 }, queries: [{ topic: 'v1/a/b' }] }] },
        /^panels\[0\]\.queries: a text panel has no queries/,
      ],
      [
        'a panel id twice',
        { panels: [statPanel({ id: 'a' }), statPanel({ id: 'a' })] },
        /^panels\[1\]\.id: a is used twice/,
      ],
      [
        'an unknown panel field',
        { panels: [statPanel({ colour: 'red' })] },
        /^panels\[0\]\.colour is not a known field/,
      ],
      [
        'a segment variable without a filter',
        { variables: [{ name: 'line', type: 'segment' }] },
        /^variables\[0\]\.filter is required/,
      ],
      [
        'a segment variable not ending in +',
        { variables: [{ name: 'line', type: 'segment', filter: 'v1/acme/#' }] },
        /^variables\[0\]\.filter must end in the one wildcard \+/,
      ],
      [
        'a variable name twice',
        {
          variables: [
            { name: 'a', type: 'constant', default: 'x' },
            { name: 'a', type: 'constant', default: 'y' },
          ],
        },
        /^variables\[1\]\.name: a is used twice/,
      ],
      [
        'a custom variable without options',
        { variables: [{ name: 'a', type: 'custom', options: [] }] },
        /^variables\[0\]\.options must list/,
      ],
      [
        'a folder of no one',
        { folderId: '00000000-0000-4000-8000-000000000000' },
        /^folderId: no such folder/,
      ],
      ['too many tags', { tags: Array.from({ length: 21 }, (_, i) => `t${i}`) }, /^tags /],
    ];
    for (const [name, body, message] of badInputs) {
      it(`refuses ${name} with 400 naming the path, storing nothing`, async () => {
        const before = await count();
        const res = await api.post(BASE, { title: 'Bad', ...body });
        assert.equal(res.status, 400, res.text);
        assert.equal(res.body.error, 'bad_request');
        assert.match(res.body.message, message);
        assert.equal(await count(), before);
      });
    }

    it('updates with optimistic concurrency: a stale version is 409 naming version, nothing changed', async () => {
      const dash = await create({ title: 'Concurrent', panels: [statPanel()] });
      const first = await api.patch(`${BASE}/${dash.id}`, { version: 1, title: 'First edit' });
      assert.equal(first.status, 200, first.text);
      assert.equal(first.body.data.version, 2);
      const stale = await api.patch(`${BASE}/${dash.id}`, { version: 1, title: 'Lost edit' });
      assert.equal(stale.status, 409);
      assert.equal(stale.body.error, 'conflict');
      assert.match(stale.body.message, /^version: the dashboard is at version 2, not 1/);
      const staleReplace = await api.put(`${BASE}/${dash.id}`, { version: 1, title: 'Lost too' });
      assert.equal(staleReplace.status, 409);
      assert.equal((await api.get(`${BASE}/${dash.id}`)).body.data.title, 'First edit');
      const missing = await api.patch(`${BASE}/${dash.id}`, { title: 'No version' });
      assert.equal(missing.status, 400);
      assert.match(missing.body.message, /^version is required/);
      // A bad change at the right version changes nothing either.
      const bad = await api.patch(`${BASE}/${dash.id}`, {
        version: 2,
        panels: [statPanel({ gridPos: { x: 23, y: 0, w: 2, h: 2 } })],
      });
      assert.equal(bad.status, 400);
      assert.equal((await api.get(`${BASE}/${dash.id}`)).body.data.version, 2);
    });

    it('writes no version for a change that leaves the dashboard as it is', async () => {
      const dash = await create({ title: 'Steady', tags: ['line-1'], panels: [statPanel()] });
      const same = await api.patch(`${BASE}/${dash.id}`, { version: 1, title: 'Steady', tags: ['line-1'] });
      assert.equal(same.status, 200, same.text);
      assert.equal(same.body.data.version, 1);
      const {
        id: _id,
        version: _v,
        createdAt: _c,
        createdBy: _cb,
        updatedAt,
        updatedBy: _ub,
        ...content
      } = dash;
      const replaced = await api.put(`${BASE}/${dash.id}`, { ...content, version: 1 });
      assert.equal(replaced.status, 200, replaced.text);
      assert.equal(replaced.body.data.version, 1);
      assert.equal(replaced.body.data.updatedAt, updatedAt);
      const versions = await api.get(`${BASE}/${dash.id}/versions`);
      assert.deepEqual(
        versions.body.data.map((v: { version: number }) => v.version),
        [1],
      );
      const retitled = await api.patch(`${BASE}/${dash.id}`, { version: 1, title: 'Steadier' });
      assert.equal(retitled.body.data.version, 2);
    });

    it('concurrent edits at one version: exactly one wins', async () => {
      const dash = await create({ title: 'Race' });
      const results = await Promise.all(
        Array.from({ length: 5 }, (_, i) =>
          api.patch(`${BASE}/${dash.id}`, { version: 1, title: `Edit ${i}` }),
        ),
      );
      assert.deepEqual(results.map((r) => r.status).sort(), [200, 409, 409, 409, 409]);
      const versions = await api.get(`${BASE}/${dash.id}/versions`);
      assert.equal(versions.body.data.length, 2);
    });

    it('adds, changes and removes panels, each a new version', async () => {
      const dash = await create({ title: 'Panels' });
      const added = await api.post(`${BASE}/${dash.id}/panels`, {
        version: 1,
        panel: statPanel({ id: 'temp' }),
      });
      assert.equal(added.status, 201, added.text);
      assert.equal(added.body.data.version, 2);
      const moved = await api.patch(`${BASE}/${dash.id}/panels/temp`, {
        version: 2,
        gridPos: { x: 12, y: 3, w: 12, h: 6 },
      });
      assert.equal(moved.status, 200, moved.text);
      assert.deepEqual(moved.body.data.panels[0].gridPos, { x: 12, y: 3, w: 12, h: 6 });
      assert.equal(moved.body.data.panels[0].title, 'Temperature');
      const outside = await api.patch(`${BASE}/${dash.id}/panels/temp`, {
        version: 3,
        gridPos: { x: 13, y: 0, w: 12, h: 6 },
      });
      assert.equal(outside.status, 400);
      assert.match(outside.body.message, /^panels\[0\]\.gridPos: x \+ w must be at most 24/);
      assert.equal(
        (await api.patch(`${BASE}/${dash.id}/panels/nope`, { version: 3, title: 'x' })).status,
        404,
      );
      const stale = await api.delete(`${BASE}/${dash.id}/panels/temp?version=2`);
      assert.equal(stale.status, 409);
      const removed = await api.delete(`${BASE}/${dash.id}/panels/temp?version=3`);
      assert.equal(removed.status, 200, removed.text);
      assert.deepEqual(removed.body.data.panels, []);
      assert.equal(removed.body.data.version, 4);
    });

    it('reverts to an earlier version as a new version, and diffs versions', async () => {
      const dash = await create({ title: 'Revert me', panels: [statPanel({ id: 'a' })] });
      await api.patch(`${BASE}/${dash.id}`, { version: 1, title: 'Changed', panels: [] });
      const diff = await api.get(`${BASE}/${dash.id}/versions/2/diff`);
      assert.equal(diff.status, 200);
      assert.ok(diff.body.data.changes.some((c: { path: string }) => c.path === '/title'));
      const reverted = await api.post(`${BASE}/${dash.id}/versions/1/revert`);
      assert.equal(reverted.status, 200, reverted.text);
      assert.equal(reverted.body.data.title, 'Revert me');
      assert.equal(reverted.body.data.panels.length, 1);
      assert.equal(reverted.body.data.version, 3);
      const list = await api.get(`${BASE}/${dash.id}/versions`);
      assert.equal(list.body.data[0].changeType, 'revert');
      assert.equal(list.body.data[0].revertedFrom, 1);
    });

    it('clones and moves dashboards between folders', async () => {
      const folder = (await api.post(FOLDERS, { name: 'Clones' })).body.data;
      const dash = await create({ title: 'Original', tags: ['x'], panels: [statPanel({ id: 'a' })] });
      const clone = await api.post(`${BASE}/${dash.id}/clone`, { folderId: folder.id });
      assert.equal(clone.status, 201, clone.text);
      assert.equal(clone.body.data.title, 'Original (copy)');
      assert.equal(clone.body.data.folderId, folder.id);
      assert.notEqual(clone.body.data.id, dash.id);
      assert.deepEqual(clone.body.data.panels, dash.panels);
      assert.equal(clone.body.data.version, 1);
      const moved = await api.patch(`${BASE}/${dash.id}`, { version: 1, folderId: folder.id });
      assert.equal(moved.status, 200);
      const inFolder = await api.get(`${BASE}?folderId=${folder.id}&sort=title`);
      assert.deepEqual(
        inFolder.body.data.map((d: { title: string }) => d.title),
        ['Original', 'Original (copy)'],
      );
      const back = await api.patch(`${BASE}/${dash.id}`, { version: 2, folderId: null });
      assert.equal(back.body.data.folderId, null);
    });

    it('lists with search, tag filter, sort and paging', async () => {
      for (const [title, tags] of [
        ['Alpha press', ['press']],
        ['Beta press', ['press', 'night']],
        ['Gamma oven', ['oven']],
      ] as const) {
        await create({ title, tags: [...tags] });
      }
      const press = await api.get(`${BASE}?tag=press&sort=title&order=desc`);
      assert.deepEqual(
        press.body.data.map((d: { title: string }) => d.title),
        ['Beta press', 'Alpha press'],
      );
      const search = await api.get(`${BASE}?search=OVEN`);
      assert.deepEqual(
        search.body.data.map((d: { title: string }) => d.title),
        ['Gamma oven'],
      );
      const page = await api.get(`${BASE}?search=press&sort=title&limit=1&offset=1`);
      assert.equal(page.body.pagination.total, 2);
      assert.deepEqual(
        page.body.data.map((d: { title: string }) => d.title),
        ['Beta press'],
      );
      const root = await api.get(`${BASE}?folderId=root&tag=oven`);
      assert.equal(root.body.data.length, 1);
      const badSort = await api.get(`${BASE}?sort=owner`);
      assert.equal(badSort.status, 400);
    });

    it('keeps organizations apart', async () => {
      const dash = await create({ title: 'Mine' });
      const folder = (await api.post(FOLDERS, { name: 'Mine too' })).body.data;
      const otherOrg = await buildOrganization(server);
      const other = api.inOrg(otherOrg);
      assert.equal((await other.get(`${BASE}/${dash.id}`)).status, 404);
      assert.equal((await other.patch(`${BASE}/${dash.id}`, { version: 1, title: 'x' })).status, 404);
      assert.equal((await other.delete(`${BASE}/${dash.id}`)).status, 404);
      assert.equal((await other.get(`${BASE}/${dash.id}/versions`)).status, 404);
      assert.equal((await other.post(`${BASE}/${dash.id}/clone`, {})).status, 404);
      assert.equal((await other.get(`${FOLDERS}/${folder.id}`)).status, 404);
      assert.equal((await other.post(BASE, { title: 'x', folderId: folder.id })).status, 400);
      assert.equal((await other.get(BASE)).body.pagination.total, 0);
      assert.deepEqual((await other.get(FOLDERS)).body.data, []);
    });

    it('lets a Viewer read but not change dashboards', async () => {
      const dash = await create({ title: 'Viewed' });
      const { client: viewer } = await signedInMember(server, 'Viewer');
      assert.equal((await viewer.get(`${BASE}/${dash.id}`)).status, 200);
      assert.equal((await viewer.get(BASE)).status, 200);
      assert.equal((await viewer.post(`${BASE}/${dash.id}/query`, {})).status, 200);
      for (const res of [
        await viewer.post(BASE, { title: 'No' }),
        await viewer.patch(`${BASE}/${dash.id}`, { version: 1, title: 'No' }),
        await viewer.delete(`${BASE}/${dash.id}`),
        await viewer.post(FOLDERS, { name: 'No' }),
        await viewer.post(`${BASE}/${dash.id}/versions/1/revert`),
      ]) {
        assert.equal(res.status, 403, res.text);
        assert.equal(res.body.error, 'insufficient_scope');
      }
      const { client: editor } = await signedInMember(server, 'Editor');
      assert.equal((await editor.patch(`${BASE}/${dash.id}`, { version: 1, title: 'Yes' })).status, 200);
    });
  });
}
