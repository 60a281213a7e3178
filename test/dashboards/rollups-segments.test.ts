import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { RollupJob } from '../../src/modules/uns/rollups/rollup-job.js';
import { HistorianRollups } from '../../src/modules/uns/rollups/rollups.js';
import { testDialects } from '../helpers/dialects.js';
import type { TestClient } from '../helpers/http-client.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';
import { createPat } from '../uns/uns-helpers.js';

const MINUTE_MS = 60_000;
const HOUR_MS = 3_600_000;
const DAY_MS = 86_400_000;
const TOPIC = 'v1/acme/compressed/press/speed';
/** Three complete days ending at midnight UTC two days ago: days the compaction takes. */
const END_MS = Math.floor(Date.now() / DAY_MS) * DAY_MS - DAY_MS;
const START_MS = END_MS - 3 * DAY_MS;
const iso = (ms: number) => new Date(ms).toISOString();

interface Sample {
  tsMs: number;
  value: number | string;
}

/** The raw computation: numeric values in [from, to) in buckets of `widthMs` aligned to the epoch. */
function expected(samples: Sample[], fromMs: number, toMs: number, widthMs: number) {
  const byTime = new Map<number, Sample>();
  for (const s of samples) byTime.set(s.tsMs, s); // a later publish replaces the value at its timestamp
  const out = new Map<
    number,
    { count: number; sum: number; min: number; max: number; first: number; last: number }
  >();
  for (const s of [...byTime.values()].sort((a, b) => a.tsMs - b.tsMs)) {
    if (s.tsMs < fromMs || s.tsMs >= toMs || typeof s.value !== 'number') continue;
    const start = Math.floor(s.tsMs / widthMs) * widthMs;
    const b = out.get(start);
    if (!b)
      out.set(start, { count: 1, sum: s.value, min: s.value, max: s.value, first: s.value, last: s.value });
    else {
      b.count++;
      b.sum += s.value;
      b.min = Math.min(b.min, s.value);
      b.max = Math.max(b.max, s.value);
      b.last = s.value;
    }
  }
  return [...out.entries()].map(([start, b]) => ({
    bucketStartUs: start * 1000,
    count: b.count,
    avg: b.sum / b.count,
    min: b.min,
    max: b.max,
    first: b.first,
    last: b.last,
  }));
}

for (const dialect of testDialects()) {
  describe(`rollups over compressed segments [${dialect}]`, () => {
    let server: TestServer;
    let api: TestClient;
    let topicId: number;
    const samples: Sample[] = [];

    const publish = async (batch: Sample[]) => {
      for (let i = 0; i < batch.length; i += 5000) {
        const res = await api.post('/api/v1/uns/data/publish/batch', {
          records: batch
            .slice(i, i + 5000)
            .map((s) => ({ topic: TOPIC, value: s.value, timestamp: iso(s.tsMs) })),
        });
        assert.equal(res.status, 200, res.text);
      }
      samples.push(...batch);
    };
    const rowCount = async () =>
      (await server.storage.db.selectFrom('uns_values').select('ts_us').execute()).length;
    /** Every reader of buckets: a rollup read of several widths and ranges, checked against the raw values. */
    const checkAll = async (rollups: HistorianRollups) => {
      const ranges: [number, number][] = [
        [START_MS - 12_345, END_MS + 54_321],
        [START_MS + 3 * HOUR_MS + 17, END_MS - DAY_MS],
        [START_MS + 17 * MINUTE_MS, Date.now()],
      ];
      for (const [from, to] of ranges) {
        for (const width of [MINUTE_MS, 5 * MINUTE_MS, HOUR_MS, DAY_MS, 7 * MINUTE_MS]) {
          const got = await rollups.buckets(
            { organizationId: server.orgId, path: TOPIC, id: topicId },
            from * 1000,
            to * 1000,
            width * 1000,
            Date.now() * 1000,
          );
          // Values are multiples of 1/8 below 2^20: every sum is exact, so avg must equal exactly too.
          assert.deepEqual(got, expected(samples, from, to, width), `${from}..${to} by ${width}`);
        }
      }
    };
    const freshRollups = () =>
      new HistorianRollups(server.storage.db, dialect, () => server.app.uns.writer.settle());
    const dropRollups = async () => {
      await server.storage.db.deleteFrom('uns_rollups').execute();
      await server.storage.db.deleteFrom('uns_rollup_coverage').execute();
      await server.storage.db.deleteFrom('uns_rollup_late').execute();
    };

    before(async () => {
      server = await startTestServer(dialect, { config: { unsCompress: true } });
      api = server.client.as({
        token: await createPat(server.admin, ['uns:publish', 'uns:read']),
        org: server.orgId,
      });
      const batch: Sample[] = [];
      let level = 400;
      for (let ms = START_MS; ms < END_MS; ms += MINUTE_MS) {
        level += Math.round(Math.sin(ms / HOUR_MS) * 16) / 8;
        batch.push({ tsMs: ms, value: ms % (97 * MINUTE_MS) === 0 ? 'idle' : level });
      }
      batch.push({ tsMs: Date.now() - 5000, value: 1.5 }); // recent: stays a row
      await publish(batch);
      const row = await server.storage.db
        .selectFrom('uns_topics')
        .select('id')
        .where('path', '=', TOPIC)
        .executeTakeFirstOrThrow();
      topicId = Number(row.id);
    });
    after(() => server?.close());

    it('rollups read before compaction, and filled cold or by the job after it, equal the raw values', async () => {
      await checkAll(server.app.uns.rollups);
      const figures = await server.app.uns.compaction?.compactCompleteDays();
      assert.ok(figures && figures.values === samples.length - 1, JSON.stringify(figures));
      assert.equal(await rowCount(), 1, 'only the recent value is still a row');
      // Rollups kept from before read the same; rollups computed now can only read the segments.
      await checkAll(server.app.uns.rollups);
      await dropRollups();
      await checkAll(freshRollups());
      await dropRollups();
      const job = new RollupJob({
        db: server.storage.db,
        rollups: freshRollups(),
        clock: { now: () => Date.now() },
        settle: () => server.app.uns.writer.settle(),
        log: server.app.log,
        tickMs: 0,
        budgetMs: 60_000,
        replicaId: 'segments-test',
      });
      await server.app.uns.rollupJob.stop();
      assert.equal(await job.runUntilIdle(), true);
      await job.stop();
      const covered = await server.storage.db
        .selectFrom('uns_rollup_coverage')
        .select(['from_us', 'to_us'])
        .where('topic_id', '=', topicId)
        .execute();
      assert.ok(covered.length > 0 && covered.every((c) => Number(c.from_us) <= START_MS * 1000));
      const adopting = freshRollups();
      await checkAll(adopting);
      assert.equal(adopting.stats.coldFills, 0, 'the job covered the compressed days from their first value');
    });

    it('a late value into a compressed day is merged into its segment at once, its rollups recomputed', async () => {
      const segmentBefore = await server.storage.db
        .selectFrom('uns_segments')
        .select(['value_count', 'data'])
        .where('topic_id', '=', topicId)
        .where('day_us', '=', (START_MS + DAY_MS) * 1000)
        .executeTakeFirstOrThrow();
      const late: Sample[] = [
        { tsMs: START_MS + DAY_MS + 30_000, value: 12_345.5 }, // between two values: a new one
        { tsMs: START_MS + DAY_MS + 5 * MINUTE_MS, value: -7.25 }, // replaces one
      ];
      await publish(late);
      await server.app.uns.lateMerges.idle();
      assert.equal(await rowCount(), 1, 'no compaction ran: the late values are in the segment already');
      const segmentAfter = await server.storage.db
        .selectFrom('uns_segments')
        .select(['value_count', 'data'])
        .where('topic_id', '=', topicId)
        .where('day_us', '=', (START_MS + DAY_MS) * 1000)
        .executeTakeFirstOrThrow();
      assert.equal(Number(segmentAfter.value_count), Number(segmentBefore.value_count) + 1);
      assert.notDeepEqual(Buffer.from(segmentAfter.data), Buffer.from(segmentBefore.data));
      const history = await api.get(
        `/api/v1/uns/data/history?topic=${TOPIC}&from=${iso(START_MS + DAY_MS)}&to=${iso(START_MS + DAY_MS + 6 * MINUTE_MS)}&limit=20`,
      );
      const byTime = new Map(
        history.body.data.map((v: { timestamp: string; value: unknown }) => [
          Date.parse(v.timestamp),
          v.value,
        ]),
      );
      assert.equal(byTime.size, 7, 'six minute values and the late one');
      assert.equal(byTime.get(late[0]!.tsMs), 12_345.5);
      assert.equal(byTime.get(late[1]!.tsMs), -7.25);
      // The server's rollups (minute, five-minute and hour units of that day filled before) see both.
      await checkAll(server.app.uns.rollups);
      const aggregate = await api.get(
        `/api/v1/uns/data/aggregate?topic=${TOPIC}&from=${iso(START_MS + DAY_MS)}&to=${iso(START_MS + DAY_MS + HOUR_MS)}&interval=1h`,
      );
      assert.equal(aggregate.status, 200);
      assert.equal(aggregate.body.data[0].max, 12_345.5);
      assert.equal(aggregate.body.data[0].min, -7.25);
    });
  });
}
