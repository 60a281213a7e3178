// Rules a planted defect got past (issue 25): each test here fails when its rule is broken.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { DAY_US } from '../../src/modules/uns/historian/historian-layout.js';
import { formatRfc3339Micros } from '../../src/modules/uns/rfc3339.js';
import { testDialects } from '../helpers/dialects.js';
import { addMember, buildOrganization, buildUser } from '../helpers/factories.js';
import type { TestClient } from '../helpers/http-client.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';
import { createPat } from './uns-helpers.js';

const PUBLISH = '/api/v1/uns/data/publish';

for (const dialect of testDialects()) {
  describe(`UNS rules a planted defect got past [${dialect}]`, () => {
    let server: TestServer;
    let api: TestClient;

    before(async () => {
      server = await startTestServer(dialect);
      api = server.client.as({
        token: await createPat(server.admin, ['uns:publish', 'uns:read', 'uns:write']),
        org: server.orgId,
      });
    });
    after(() => server?.close());

    it('re-binding a topic filter with a new mode takes effect (normal to strict and back)', async () => {
      const schema = await api.post('/api/v1/uns/topics/schemas', {
        name: 'rebind-level',
        definition: { jsonSchema: { type: 'number' }, maximum: 10 },
      });
      assert.equal(schema.status, 201, schema.text);
      const bind = (mode: 'normal' | 'strict') =>
        api.post('/api/v1/uns/topics/schema-bindings', {
          filter: 'v1/rebind/#',
          schema: 'rebind-level',
          mode,
        });

      assert.equal((await bind('normal')).status, 201);
      const outOfRange = await api.post(PUBLISH, { topic: 'v1/rebind/tank/level', value: 20 });
      assert.equal(outOfRange.status, 200, 'normal: an out-of-range value is stored (with lower quality)');

      const strict = await bind('strict');
      assert.ok(strict.status === 201 || strict.status === 200, strict.text);
      assert.equal(strict.body.data.mode, 'strict');
      const listed = await api.get('/api/v1/uns/topics/schema-bindings');
      const bindings = listed.body.data.filter((b: { filter: string }) => b.filter === 'v1/rebind/#');
      assert.deepEqual(
        bindings.map((b: { mode: string }) => b.mode),
        ['strict'],
        'one binding of the filter, now strict',
      );
      const refused = await api.post(PUBLISH, { topic: 'v1/rebind/tank/level', value: 21 });
      assert.equal(refused.status, 400, 'strict: the same violation is refused at once');

      assert.ok([200, 201].includes((await bind('normal')).status));
      assert.equal((await api.post(PUBLISH, { topic: 'v1/rebind/tank/level', value: 22 })).status, 200);
    });

    it("another organization's topics do not show through hasChildren", async () => {
      const otherOrg = await buildOrganization(server);
      const user = await buildUser(server);
      await addMember(server, otherOrg, user.id, 'Editor');
      const other = await server.client.login(user.email, user.password, otherOrg);
      // Here v1/share/x is a leaf; in the other organization it has a child.
      assert.equal((await api.post(PUBLISH, { topic: 'v1/share/x', value: 1 })).status, 200);
      assert.equal((await other.post(PUBLISH, { topic: 'v1/share/x/deeper', value: 2 })).status, 200);

      const node = await api.get('/api/v1/uns/topics/v1/share/x');
      assert.equal(node.status, 200, node.text);
      assert.equal(node.body.data.hasChildren, false, 'the node view');
      const children = await api.get('/api/v1/uns/topics?parent=v1/share');
      const x = children.body.data.find((item: { path: string }) => item.path === 'v1/share/x');
      assert.equal(x?.hasChildren, false, 'the browse list');
      const searched = await api.get('/api/v1/uns/topics?search=share');
      const found = searched.body.data.find((item: { path: string }) => item.path === 'v1/share/x');
      assert.equal(found?.hasChildren, false, 'the search list');
      // In the other organization it does have children.
      const theirs = await other.get('/api/v1/uns/topics/v1/share/x');
      assert.equal(theirs.body.data.hasChildren, true);
    });

    it('retention keeps the values of the cutoff day (PostgreSQL drops only whole days before it)', async () => {
      const today = Math.floor((Date.now() * 1000) / DAY_US);
      const cutoffDay = today - 10;
      const cutoffUs = cutoffDay * DAY_US + DAY_US / 2; // noon of the cutoff day
      const stamps = {
        dayBeforeLast: cutoffDay * DAY_US - 1, // 23:59:59.999999 the day before
        cutoffDayStart: cutoffDay * DAY_US,
        justBeforeCutoff: cutoffUs - 1,
        atCutoff: cutoffUs,
        dayAfter: (cutoffDay + 1) * DAY_US,
      };
      for (const [name, us] of Object.entries(stamps)) {
        const res = await api.post(PUBLISH, {
          topic: 'v1/retention/boundary',
          value: name,
          timestamp: formatRfc3339Micros(us),
        });
        assert.equal(res.status, 200, res.text);
      }
      await server.app.uns.writer.settle();
      await server.app.uns.layout.applyRetention(cutoffUs);
      const from = formatRfc3339Micros((cutoffDay - 2) * DAY_US);
      const history = await api.get(`/api/v1/uns/data/history?topic=v1/retention/boundary&from=${from}`);
      assert.equal(history.status, 200, history.text);
      const kept = history.body.data.map((v: { value: string }) => v.value);
      const expected =
        dialect === 'postgres' && server.app.uns.layout.kind === 'partitioned'
          ? ['cutoffDayStart', 'justBeforeCutoff', 'atCutoff', 'dayAfter'] // whole days only
          : ['atCutoff', 'dayAfter']; // row by row: everything before the cutoff goes
      assert.deepEqual(kept, expected);
    });
  });
}
