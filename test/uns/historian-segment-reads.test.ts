import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { KyselyPlugin } from 'kysely';
import { DataRepository } from '../../src/modules/uns/reading/data.repository.js';
import { createTestDatabase, testDialects } from '../helpers/dialects.js';
import type { TestClient } from '../helpers/http-client.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';
import { createPat } from './uns-helpers.js';

void createTestDatabase;
const HOUR_MS = 3_600_000;
const DAY_MS = 86_400_000;
/** Three days, ending two days ago at midnight UTC: complete days for compaction. */
const END_MS = Math.floor(Date.now() / DAY_MS) * DAY_MS - DAY_MS;
const START_MS = END_MS - 3 * DAY_MS;
const iso = (ms: number) => new Date(ms).toISOString();

for (const dialect of testDialects()) {
  describe(`historian reads over compressed segments and rows [${dialect}]`, () => {
    let server: TestServer;
    let api: TestClient;
    const topic = 'v1/segments/line1/temperature';
    const state = 'v1/segments/line1/state';

    /** Everything a reader gets: history pages both ways with cursors, export CSV, aggregates. */
    async function readAll() {
      const pages = async (order: 'asc' | 'desc', path: string) => {
        const values: unknown[] = [];
        const cursors: (string | null)[] = [];
        let cursor: string | null = null;
        do {
          const query: string = `topic=${path}&from=${iso(START_MS - DAY_MS)}&to=${iso(END_MS + 2 * DAY_MS)}&order=${order}&limit=700${cursor ? `&cursor=${cursor}` : ''}`;
          const res: { status: number; body: any } = await api.get(`/api/v1/uns/data/history?${query}`);
          assert.equal(res.status, 200, JSON.stringify(res.body));
          values.push(...res.body.data);
          cursor = res.body.pagination.nextCursor;
          cursors.push(cursor);
        } while (cursor !== null);
        return { values, cursors };
      };
      const window = `from=${iso(START_MS)}&to=${iso(END_MS + DAY_MS)}`;
      const exported = await api.get(`/api/v1/uns/data/export?topic=${topic}&${window}`);
      assert.equal(exported.status, 200);
      const hourly = await api.get(`/api/v1/uns/data/aggregate?topic=${topic}&${window}&interval=1h`);
      const minutes = await api.get(`/api/v1/uns/data/aggregate?topic=${topic}&${window}&interval=7m`);
      assert.equal(hourly.status, 200);
      return {
        asc: await pages('asc', topic),
        desc: await pages('desc', topic),
        states: await pages('desc', state),
        csv: exported.text,
        hourly: hourly.body.data,
        minutes: minutes.body.data,
      };
    }

    before(async () => {
      server = await startTestServer(dialect, { config: { unsCompress: true } });
      api = server.client.as({
        token: await createPat(server.admin, ['uns:publish', 'uns:read']),
        org: server.orgId,
      });
      const records: unknown[] = [];
      let level = 20;
      for (let ms = START_MS; ms < END_MS; ms += 60_000) {
        level = Math.round((level + Math.sin(ms / HOUR_MS) * 0.3) * 100) / 100;
        records.push({ topic, value: level, timestamp: iso(ms), quality: ms % 7 === 0 ? 1 : 0 });
        if (ms % (6 * HOUR_MS) === 0)
          records.push({
            topic: state,
            value: ms % (12 * HOUR_MS) ? 'Running' : 'Idle',
            timestamp: iso(ms),
            source: 'plc',
          });
      }
      records.push({ topic, value: 'sensor fault', timestamp: iso(START_MS + 90_500) });
      records.push({ topic, value: { code: 7, text: 'überhitzt' }, timestamp: iso(START_MS + 91_250) });
      for (let i = 0; i < records.length; i += 5000) {
        const res = await api.post('/api/v1/uns/data/publish/batch', { records: records.slice(i, i + 5000) });
        assert.equal(res.status, 200, JSON.stringify(res.body));
      }
      // Recent values stay rows.
      const recent = await api.post('/api/v1/uns/data/publish', {
        topic,
        value: 1.5,
        timestamp: iso(Date.now() - 1000),
      });
      assert.equal(recent.status, 200);
    });
    after(() => server?.close());

    /** Compacts now, with the server's own job (turned on for this suite). */
    async function compact() {
      const job = server.app.uns.compaction;
      assert.ok(job, 'MERIDIAN_UNS_COMPRESS is on for this suite');
      return job.compactCompleteDays();
    }

    it('history pages (both orders, cursors across segments and rows), export and aggregates read the same after compaction', async () => {
      const before = await readAll();
      const figures = await compact();
      assert.ok(figures && figures.values > 4000, JSON.stringify(figures));
      const rowsLeft = await server.storage.db.selectFrom('uns_values').select('ts_us').execute();
      assert.equal(rowsLeft.length, 1, 'only the recent value is still a row');
      const afterwards = await readAll();
      assert.deepEqual(afterwards.asc, before.asc);
      assert.deepEqual(afterwards.desc, before.desc);
      assert.deepEqual(afterwards.states, before.states);
      assert.equal(afterwards.csv, before.csv);
      assert.deepEqual(afterwards.minutes, before.minutes);
      assert.equal(afterwards.hourly.length, before.hourly.length);
      for (const [i, bucket] of afterwards.hourly.entries()) {
        const was = before.hourly[i];
        assert.deepEqual({ ...bucket, avg: 0 }, { ...was, avg: 0 });
        assert.ok(Math.abs(bucket.avg - was.avg) <= 1e-9 * Math.abs(was.avg), `${bucket.avg} ${was.avg}`);
      }
    });

    it('a late value into a compressed day is read at once and merged by the next compaction', async () => {
      const lateAt = START_MS + DAY_MS + 30_000; // between two minute values
      const replacedAt = START_MS + DAY_MS + 120_000; // a value already compressed
      const res = await api.post('/api/v1/uns/data/publish/batch', {
        records: [
          { topic, value: 99.25, timestamp: iso(lateAt), source: 'backfill' },
          { topic, value: -4, timestamp: iso(replacedAt) },
        ],
      });
      assert.equal(res.status, 200);
      const read = async () => {
        const r = await api.get(
          `/api/v1/uns/data/history?topic=${topic}&from=${iso(lateAt - 60_000)}&to=${iso(replacedAt + 1)}&limit=10`,
        );
        return r.body.data.map((v: { value: unknown; source: unknown }) => [v.value, v.source]);
      };
      const expected = (await read()) as unknown[];
      assert.deepEqual(expected.length, 4);
      assert.deepEqual(expected[1], [99.25, 'backfill']);
      assert.deepEqual(expected[3], [-4, null]);
      const agg = await api.get(
        `/api/v1/uns/data/aggregate?topic=${topic}&from=${iso(replacedAt)}&to=${iso(replacedAt + 1)}&interval=1s`,
      );
      assert.deepEqual(
        agg.body.data.map((b: { count: number; min: number }) => [b.count, b.min]),
        [[1, -4]],
        'the row replaces the compressed value, counted once',
      );
      await compact();
      assert.deepEqual(await read(), expected);
      const rowsLeft = await server.storage.db.selectFrom('uns_values').select('ts_us').execute();
      assert.equal(rowsLeft.length, 1);
    });

    it('an aggregate read while a late value is merged into its segment counts the value once', async () => {
      const atMs = START_MS + DAY_MS + 180_000; // a compressed value
      const res = await api.post('/api/v1/uns/data/publish', { topic, value: -7, timestamp: iso(atMs) });
      assert.equal(res.status, 200);
      const { id: topicId } = await server.storage.db
        .selectFrom('uns_topics')
        .select('id')
        .where('path', '=', topic)
        .executeTakeFirstOrThrow();
      // The merge commits (on another connection) right after the read's first statement, the rows'
      // aggregates, and before it reads the segments: as a late merge or a compaction may.
      let merged = false;
      const mergeAfterAggregates: KyselyPlugin = {
        transformQuery: (args) => args.node,
        async transformResult(args) {
          const first = (args.result.rows as Record<string, unknown>[])[0];
          if (!merged && first !== undefined && 'bucket' in first) {
            merged = true;
            const dayUs = Math.floor(atMs / DAY_MS) * DAY_MS * 1000;
            await server.app.uns.compactor.compactDay(Number(topicId), dayUs);
          }
          return args.result;
        },
      };
      const reader = new DataRepository(server.storage.db.withPlugin(mergeAfterAggregates), () =>
        server.app.uns.writer.settle(),
      );
      const buckets = await reader.buckets(Number(topicId), atMs * 1000, atMs * 1000 + 1, 1_000_000);
      assert.ok(merged, 'the merge ran between the statements');
      assert.deepEqual(
        buckets.map((b) => [b.count, b.min, b.max]),
        [[1, -7, -7]],
      );
      const rows = await server.storage.db
        .selectFrom('uns_values')
        .select('ts_us')
        .where('ts_us', '=', atMs * 1000)
        .execute();
      assert.equal(rows.length, 0, 'the late value was merged into its segment');
    });
  });
}
