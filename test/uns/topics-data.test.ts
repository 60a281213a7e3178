import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { testDialects } from '../helpers/dialects.js';
import { addMember, buildOrganization, buildUser } from '../helpers/factories.js';
import type { TestClient } from '../helpers/http-client.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';
import { createPat, unsCounts } from './uns-helpers.js';

const PUBLISH = '/api/v1/uns/data/publish';

for (const dialect of testDialects()) {
  describe(`UNS topics and data [${dialect}]`, () => {
    let server: TestServer;
    let api: TestClient;

    before(async () => {
      server = await startTestServer(dialect);
      const token = await createPat(server.admin, ['uns:publish', 'uns:read', 'uns:write']);
      api = server.client.as({ token, org: server.orgId });
      const records = [];
      for (let i = 0; i < 30; i++) records.push({ topic: `v1/site/area${i % 3}/cell${i}/temp`, value: i });
      records.push({ topic: 'v1/site/area0/cell0/speed', value: 'fast' });
      records.push({ topic: 'v1/other/x/y', value: 1 });
      const res = await api.post(`${PUBLISH}/batch`, { records });
      assert.equal(res.status, 200, res.text);
    });
    after(() => server?.close());

    it('concurrently publishing into 50 new sibling topics creates each node once', async () => {
      const results = await Promise.all(
        Array.from({ length: 50 }, (_, i) =>
          api.post(PUBLISH, { topic: `v1/concurrent/line/m${i}/v`, value: i }),
        ),
      );
      assert.ok(results.every((r) => r.status === 200));
      const rows = await server.storage.db
        .selectFrom('uns_topics')
        .select(['path'])
        .where('organization_id', '=', server.orgId)
        .where('path', 'like', 'v1/concurrent%')
        .execute();
      const paths = rows.map((r) => r.path);
      assert.equal(new Set(paths).size, paths.length);
      assert.equal(paths.length, 2 + 50 * 2);
    });

    it('browses children page by page with a cursor', async () => {
      const seen: string[] = [];
      let cursor: string | null = null;
      do {
        const query: string = cursor ? `&cursor=${cursor}` : '';
        const res = await api.get(`/api/v1/uns/topics?parent=v1/site/area1&limit=4${query}`);
        assert.equal(res.status, 200);
        seen.push(...res.body.data.map((t: { path: string }) => t.path));
        cursor = res.body.pagination.nextCursor;
      } while (cursor);
      assert.equal(seen.length, 10);
      assert.deepEqual(seen, [...seen].sort());
      assert.ok(seen.every((p) => p.startsWith('v1/site/area1/cell')));
    });

    it('lists top-level nodes without a parent', async () => {
      const res = await api.get('/api/v1/uns/topics');
      const paths = res.body.data.map((t: { path: string }) => t.path);
      assert.ok(paths.includes('v1/site') && paths.includes('v1/other'));
      assert.ok(res.body.data.every((t: { parentPath: string | null }) => t.parentPath === null));
    });

    it('searches by path substring', async () => {
      const res = await api.get('/api/v1/uns/topics?search=SPEED');
      assert.deepEqual(
        res.body.data.map((t: { path: string }) => t.path),
        ['v1/site/area0/cell0/speed'],
      );
    });

    it('filters with + and #', async () => {
      const plus = await api.get(
        `/api/v1/uns/topics?filter=${encodeURIComponent('v1/site/area2/+/temp')}&limit=1000`,
      );
      assert.equal(plus.body.data.length, 10);
      const hash = await api.get(`/api/v1/uns/topics?filter=${encodeURIComponent('v1/site/area0/cell0/#')}`);
      assert.deepEqual(
        hash.body.data.map((t: { path: string }) => t.path),
        ['v1/site/area0/cell0', 'v1/site/area0/cell0/speed', 'v1/site/area0/cell0/temp'],
      );
    });

    it('views a topic with its latest value; 404 for an unknown one', async () => {
      const res = await api.get('/api/v1/uns/topics/v1/site/area1/cell4/temp');
      assert.equal(res.status, 200);
      assert.equal(res.body.data.latest.value, 4);
      assert.equal(res.body.data.schemaBinding, null);
      assert.equal(res.body.data.stale, null);
      const missing = await api.get('/api/v1/uns/topics/v1/site/nothing/here');
      assert.equal(missing.status, 404);
      assert.equal(missing.body.error, 'not_found');
    });

    it('creates a topic without a value, and 409 when it exists', async () => {
      const res = await api.post('/api/v1/uns/topics', {
        path: 'v1/created/a/b',
        description: 'made by hand',
      });
      assert.equal(res.status, 201);
      assert.equal(res.body.data.description, 'made by hand');
      assert.equal(res.body.data.latest, null);
      assert.equal((await api.post('/api/v1/uns/topics', { path: 'v1/created/a/b' })).status, 409);
    });

    it('returns latest values of many topics by filter', async () => {
      const res = await api.get(
        `/api/v1/uns/data/latest?filter=${encodeURIComponent('v1/site/+/+/temp')}&limit=1000`,
      );
      assert.equal(res.status, 200);
      assert.equal(res.body.data.length, 30);
    });

    it('pages a time range in both orders', async () => {
      const topic = 'v1/range/a/b';
      const records = Array.from({ length: 25 }, (_, i) => ({
        topic,
        value: i,
        timestamp: new Date(Date.UTC(2026, 0, 1, 0, 0, i)).toISOString(),
      }));
      await api.post(`${PUBLISH}/batch`, { records });
      for (const order of ['asc', 'desc'] as const) {
        const values: number[] = [];
        let cursor: string | null = null;
        do {
          const extra: string = cursor ? `&cursor=${cursor}` : '';
          const res = await api.get(
            `/api/v1/uns/data/history?topic=${topic}&order=${order}&limit=10&from=2026-01-01T00:00:05Z&to=2026-01-01T00:00:20Z${extra}`,
          );
          assert.equal(res.status, 200, res.text);
          values.push(...res.body.data.map((v: { value: number }) => v.value));
          cursor = res.body.pagination.nextCursor;
        } while (cursor);
        const expected = Array.from({ length: 15 }, (_, i) => i + 5);
        assert.deepEqual(values, order === 'asc' ? expected : expected.reverse());
      }
    });

    it('aggregates numeric values into time buckets', async () => {
      const topic = 'v1/buckets/a/b';
      const records = Array.from({ length: 20 }, (_, i) => ({
        topic,
        value: i,
        timestamp: new Date(Date.UTC(2026, 0, 1, 0, 0, i)).toISOString(),
      }));
      records.push({ topic, value: 'text' as never, timestamp: '2026-01-01T00:00:30Z' });
      await api.post(`${PUBLISH}/batch`, { records });
      const res = await api.get(
        `/api/v1/uns/data/aggregate?topic=${topic}&from=2026-01-01T00:00:00Z&to=2026-01-01T00:01:00Z&interval=10s`,
      );
      assert.equal(res.status, 200, res.text);
      assert.deepEqual(res.body.data, [
        { start: '2026-01-01T00:00:00.000000Z', count: 10, avg: 4.5, min: 0, max: 9, first: 0, last: 9 },
        { start: '2026-01-01T00:00:10.000000Z', count: 10, avg: 14.5, min: 10, max: 19, first: 10, last: 19 },
      ]);
      const bad = await api.get(
        `/api/v1/uns/data/aggregate?topic=${topic}&from=2026-01-01T00:00:00Z&to=2026-01-02T00:00:00Z&interval=ten`,
      );
      assert.equal(bad.status, 400);
      assert.match(bad.body.message, /interval/);
    });

    it('exports a range as CSV', async () => {
      const res = await api.get(
        '/api/v1/uns/data/export?topic=v1/range/a/b&from=2026-01-01T00:00:00Z&to=2026-01-01T00:00:03Z',
      );
      assert.equal(res.status, 200);
      assert.match(res.headers.get('content-type') ?? '', /text\/csv/);
      const lines = res.text.trim().split('\r\n');
      assert.equal(lines[0], 'timestamp,value,quality,source,receivedAt');
      assert.equal(lines.length, 4);
      assert.match(lines[1]!, /^2026-01-01T00:00:00\.000000Z,0,0,,/);
    });

    it('deletes a subtree with its history only when asked to', async () => {
      await api.post(`${PUBLISH}/batch`, {
        records: [
          { topic: 'v1/doomed/a/x', value: 1 },
          { topic: 'v1/doomed/a/y', value: 2 },
        ],
      });
      const before = await unsCounts(server);
      assert.equal((await api.delete('/api/v1/uns/topics/v1/doomed')).status, 409);
      const res = await api.delete('/api/v1/uns/topics/v1/doomed?recursive=true');
      assert.equal(res.status, 200);
      assert.equal(res.body.data.deleted, 4);
      const afterCounts = await unsCounts(server);
      assert.equal(before.topics - afterCounts.topics, 4);
      assert.equal(before.values - afterCounts.values, 2);
      assert.equal((await api.get('/api/v1/uns/topics/v1/doomed/a/x')).status, 404);
      // The reads resolve topics from the ids the writer knows (it published to this one): the delete
      // made it forget them, so they answer 404 rather than the empty data of the old id.
      const range = 'from=2020-01-01T00:00:00Z&to=2100-01-01T00:00:00Z';
      for (const read of [
        '/api/v1/uns/data/latest?topic=v1/doomed/a/x',
        `/api/v1/uns/data/history?topic=v1/doomed/a/x&${range}`,
        `/api/v1/uns/data/aggregate?topic=v1/doomed/a/x&${range}&interval=1d`,
      ])
        assert.equal((await api.get(read)).status, 404, read);
      // Publishing again recreates the nodes, and the reads find the new topic's values only.
      assert.equal((await api.post(PUBLISH, { topic: 'v1/doomed/a/x', value: 3 })).status, 200);
      assert.equal((await api.get('/api/v1/uns/topics/v1/doomed/a/x')).status, 200);
      assert.equal((await api.get('/api/v1/uns/data/latest?topic=v1/doomed/a/x')).body.data.value, 3);
      const history = await api.get(`/api/v1/uns/data/history?topic=v1/doomed/a/x&${range}`);
      assert.deepEqual(
        history.body.data.map((v: { value: unknown }) => v.value),
        [3],
      );
    });

    it('isolates organizations: another organization sees none of these topics', async () => {
      const otherOrg = await buildOrganization(server);
      const user = await buildUser(server);
      await addMember(server, otherOrg, user.id, 'Owner');
      const session = await server.client.login(user.email, user.password, otherOrg);
      const token = await createPat(session, ['uns:read', 'uns:publish']);
      const other = server.client.as({ token, org: otherOrg });
      assert.deepEqual((await other.get('/api/v1/uns/topics')).body.data, []);
      assert.equal((await other.get('/api/v1/uns/topics/v1/site/area1/cell4/temp')).status, 404);
      assert.equal((await other.get('/api/v1/uns/data/latest?topic=v1/site/area1/cell4/temp')).status, 404);
      assert.deepEqual((await other.get('/api/v1/uns/data/latest?filter=v1/%23')).body.data, []);
      // The same path in the other organization is its own topic.
      assert.equal((await other.post(PUBLISH, { topic: 'v1/site/area1/cell4/temp', value: 99 })).status, 200);
      assert.equal(
        (await api.get('/api/v1/uns/data/latest?topic=v1/site/area1/cell4/temp')).body.data.value,
        4,
      );
      // Its token is refused in the first organization.
      assert.equal((await other.get('/api/v1/uns/topics', { org: server.orgId })).status, 422);
    });
  });
}
