import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { testDialects } from '../helpers/dialects.js';
import type { TestClient } from '../helpers/http-client.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';
import { createPat, unsCounts } from './uns-helpers.js';

const PUBLISH = '/api/v1/uns/data/publish';

for (const dialect of testDialects()) {
  describe(`UNS publish [${dialect}]`, () => {
    let server: TestServer;
    let api: TestClient;

    before(async () => {
      server = await startTestServer(dialect);
      const token = await createPat(server.admin, ['uns:publish', 'uns:read', 'uns:write']);
      api = server.client.as({ token, org: server.orgId });
    });
    after(() => server?.close());

    const latest = async (topic: string) =>
      (await api.get(`/api/v1/uns/data/latest?topic=${encodeURIComponent(topic)}`)).body.data;

    describe('the publish table', () => {
      it('answers 200 {"data":{"message"}} and stores the value with defaults (quality 0, time of receipt)', async () => {
        const before = Date.now();
        const res = await api.post(PUBLISH, { topic: 'v1/plant/line1/temp', value: 21.5 });
        assert.equal(res.status, 200);
        assert.deepEqual(Object.keys(res.body), ['data']);
        assert.equal(typeof res.body.data.message, 'string');
        const value = await latest('v1/plant/line1/temp');
        assert.equal(value.value, 21.5);
        assert.equal(value.quality, 0);
        assert.equal(value.source, null);
        assert.ok(Date.parse(value.timestamp) >= before - 1000);
      });

      it('creates the topic and every missing parent node', async () => {
        await api.post(PUBLISH, { topic: 'v1/tree/a/b/c', value: 1 });
        for (const path of ['v1/tree', 'v1/tree/a', 'v1/tree/a/b', 'v1/tree/a/b/c']) {
          const res = await api.get(`/api/v1/uns/topics/${path}`);
          assert.equal(res.status, 200, path);
        }
        const children = await api.get('/api/v1/uns/topics?parent=v1/tree/a');
        assert.deepEqual(
          children.body.data.map((t: { path: string }) => t.path),
          ['v1/tree/a/b'],
        );
      });

      it('accepts string, boolean and object values and keeps them exactly', async () => {
        for (const value of ['on', true, { a: 1, b: [1, 2] }, -0.5, 0]) {
          const topic = `v1/types/${typeof value}/${String(JSON.stringify(value)).length}`;
          assert.equal((await api.post(PUBLISH, { topic, value })).status, 200);
          assert.deepEqual((await latest(topic)).value, value);
        }
      });

      it('stores the declared timestamp with microseconds, the source and the quality', async () => {
        const res = await api.post(PUBLISH, {
          topic: 'v1/plant/line1/pressure',
          value: 3,
          timestamp: '2026-01-02T03:04:05.123456+01:00',
          quality: 1,
          source: 'plc-7',
        });
        assert.equal(res.status, 200);
        const value = await latest('v1/plant/line1/pressure');
        assert.equal(value.timestamp, '2026-01-02T02:04:05.123456Z');
        assert.equal(value.quality, 1);
        assert.equal(value.source, 'plc-7');
      });

      it('keeps the newest declared timestamp as latest: a backfilled older value never replaces it', async () => {
        const topic = 'v1/latest/rule/a';
        await api.post(PUBLISH, { topic, value: 2, timestamp: '2026-01-01T00:00:02Z' });
        await api.post(PUBLISH, { topic, value: 1, timestamp: '2026-01-01T00:00:01Z' });
        assert.equal((await latest(topic)).value, 2);
        const history = await api.get(`/api/v1/uns/data/history?topic=${topic}`);
        assert.deepEqual(
          history.body.data.map((v: { value: number }) => v.value),
          [1, 2],
        );
      });

      it('replaces the record of the same topic and timestamp (idempotent retries)', async () => {
        const topic = 'v1/latest/retry/a';
        const before = await unsCounts(server);
        await api.post(PUBLISH, { topic, value: 5, timestamp: '2026-01-01T00:00:00Z' });
        await api.post(PUBLISH, { topic, value: 6, timestamp: '2026-01-01T00:00:00Z' });
        const afterCounts = await unsCounts(server);
        assert.equal(afterCounts.values - before.values, 1);
        assert.equal((await latest(topic)).value, 6);
      });

      it('refuses a timestamp further in the future than the tolerance, naming timestamp', async () => {
        const before = await unsCounts(server);
        const res = await api.post(PUBLISH, {
          topic: 'v1/future/a',
          value: 1,
          timestamp: new Date(Date.now() + 3_600_000).toISOString(),
        });
        assert.equal(res.status, 400);
        assert.match(res.body.message, /^timestamp/);
        assert.deepEqual(await unsCounts(server), before);
      });

      it('accepts a timestamp slightly in the future (within the tolerance)', async () => {
        const res = await api.post(PUBLISH, {
          topic: 'v1/future/b',
          value: 1,
          timestamp: new Date(Date.now() + 60_000).toISOString(),
        });
        assert.equal(res.status, 200);
      });
    });

    describe('bad input: 400 naming the field, nothing stored', () => {
      const cases: [string, { body?: unknown; raw?: string; headers?: Record<string, string> }, RegExp][] = [
        ['missing topic', { body: { value: 1 } }, /topic/],
        ['topic without prefix', { body: { topic: 'plant/line/temp', value: 1 } }, /topic/],
        ['topic with +', { body: { topic: 'v1/plant/+/temp', value: 1 } }, /topic/],
        ['topic with #', { body: { topic: 'v1/plant/#', value: 1 } }, /topic/],
        ['empty segment', { body: { topic: 'v1/plant//temp', value: 1 } }, /topic/],
        ['too deep', { body: { topic: `v1/${Array(40).fill('a').join('/')}`, value: 1 } }, /topic/],
        [
          'too long',
          { body: { topic: `v1/${Array(10).fill('x'.repeat(120)).join('/')}`, value: 1 } },
          /topic/,
        ],
        ['missing value', { body: { topic: 'v1/bad/value' } }, /value/],
        ['null value', { body: { topic: 'v1/bad/value', value: null } }, /value/],
        ['array value', { body: { topic: 'v1/bad/value', value: [1, 2] } }, /value/],
        [
          'malformed timestamp',
          { body: { topic: 'v1/bad/ts', value: 1, timestamp: '2026-13-01' } },
          /timestamp/,
        ],
        ['quality 3', { body: { topic: 'v1/bad/q', value: 1, quality: 3 } }, /quality/],
        ['quality -1', { body: { topic: 'v1/bad/q', value: 1, quality: -1 } }, /quality/],
        ['quality 1.5', { body: { topic: 'v1/bad/q', value: 1, quality: 1.5 } }, /quality/],
        ['quality "0"', { body: { topic: 'v1/bad/q', value: 1, quality: '0' } }, /quality/],
        ['unknown field', { body: { topic: 'v1/bad/u', value: 1, colour: 'red' } }, /colour/],
        [
          'invalid JSON',
          { raw: '{"topic": "v1/bad/json", "value": ', headers: { 'content-type': 'application/json' } },
          /JSON/,
        ],
        [
          'wrong content type',
          { raw: 'topic=v1/a/b&value=1', headers: { 'content-type': 'application/x-www-form-urlencoded' } },
          /content-type/,
        ],
        ['a body that is not an object', { body: [1, 2] }, /body/],
      ];
      for (const [name, request, field] of cases) {
        it(`refuses ${name}`, async () => {
          const before = await unsCounts(server);
          const res = await api.request('POST', PUBLISH, request);
          assert.equal(res.status, 400, res.text);
          assert.equal(res.body.error, 'bad_request');
          assert.match(res.body.message, field);
          assert.deepEqual(await unsCounts(server), before);
        });
      }
    });

    describe('batch', () => {
      it('commits every record of a batch', async () => {
        const records = Array.from({ length: 500 }, (_, i) => ({
          topic: `v1/batch/ok/m${i % 10}`,
          value: i,
          timestamp: new Date(Date.UTC(2026, 0, 1, 0, 0, i)).toISOString(),
        }));
        const res = await api.post(`${PUBLISH}/batch`, { records });
        assert.equal(res.status, 200, res.text);
        assert.equal(res.body.data.count, 500);
        assert.equal((await latest('v1/batch/ok/m3')).value, 493);
      });

      it('keeps text exactly, whatever it holds (quotes, backslashes, braces, commas, NULL)', async () => {
        const texts = ['say "hi"', 'C:\\dir\\', '{a,b}', 'NULL', '', 'ünï\u{1F600}', '\\"', 'x\ny\tz'];
        const source = (i: number) => `sensor "${i}" \\ {a,b} NULL`;
        const records = texts.flatMap((text, i) => [
          { topic: `v1/batch/text/t${i}`, value: text, source: source(i), timestamp: '2026-01-01T00:00:00Z' },
          { topic: `v1/batch/text/t${i}`, value: { text, list: [text] }, timestamp: '2026-01-01T00:00:01Z' },
        ]);
        const res = await api.post(`${PUBLISH}/batch`, { records });
        assert.equal(res.status, 200, res.text);
        for (const [i, text] of texts.entries()) {
          const history = await api.get(`/api/v1/uns/data/history?topic=v1/batch/text/t${i}&order=asc`);
          assert.deepEqual(
            history.body.data.map((v: { value: unknown; source: unknown }) => [v.value, v.source]),
            [
              [text, source(i)],
              [{ text, list: [text] }, null],
            ],
          );
        }
      });

      it('keeps the later of two records with the same topic and timestamp in one batch', async () => {
        const timestamp = '2026-01-02T00:00:00Z';
        const records = [
          { topic: 'v1/batch/dup/a', value: 1, timestamp },
          { topic: 'v1/batch/dup/b', value: 10, timestamp },
          { topic: 'v1/batch/dup/a', value: 2, timestamp },
          { topic: 'v1/batch/dup/a', value: 3, timestamp },
        ];
        assert.equal((await api.post(`${PUBLISH}/batch`, { records })).status, 200);
        const history = await api.get('/api/v1/uns/data/history?topic=v1/batch/dup/a');
        assert.deepEqual(
          history.body.data.map((v: { value: unknown }) => v.value),
          [3],
        );
        assert.equal((await latest('v1/batch/dup/a')).value, 3);
        assert.equal((await latest('v1/batch/dup/b')).value, 10);
      });

      it('refuses the whole batch, listing the index and field of each refused record', async () => {
        const before = await unsCounts(server);
        const res = await api.post(`${PUBLISH}/batch`, {
          records: [
            { topic: 'v1/batch/bad/a', value: 1 },
            { topic: 'v1/batch/bad/b', value: null },
            { topic: 'v1/batch/bad/c', value: 1, quality: 7 },
          ],
        });
        assert.equal(res.status, 400);
        assert.equal(res.body.error, 'bad_request');
        assert.deepEqual(
          res.body.errors.map((e: { index: number; field: string }) => [e.index, e.field]),
          [
            [1, 'records[1].value'],
            [2, 'records[2].quality'],
          ],
        );
        assert.deepEqual(await unsCounts(server), before);
      });

      it('refuses more than 10,000 records', async () => {
        const records = Array.from({ length: 10_001 }, () => ({ topic: 'v1/batch/big/a', value: 1 }));
        const res = await api.post(`${PUBLISH}/batch`, { records });
        assert.equal(res.status, 400);
        assert.match(res.body.message, /^records/);
      });
    });

    describe('access', () => {
      it('answers 403 to a token without uns:publish', async () => {
        const token = await createPat(server.admin, ['uns:read']);
        const res = await server.client
          .as({ token, org: server.orgId })
          .post(PUBLISH, { topic: 'v1/a/b', value: 1 });
        assert.equal(res.status, 403);
        assert.equal(res.body.error, 'insufficient_scope');
      });

      it('answers 401 before reading the body', async () => {
        const res = await server.client.post(
          PUBLISH,
          { topic: 'v1/a/b', value: null },
          { org: server.orgId },
        );
        assert.equal(res.status, 401);
      });
    });
  });
}
