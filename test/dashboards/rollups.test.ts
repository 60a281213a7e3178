import assert from 'node:assert/strict';
import { after, before, describe, it, test } from 'node:test';
import type { CommitJob } from '../../src/modules/uns/historian/historian-writer.js';
import { purgeOrganizationUns } from '../../src/modules/uns/organization-purge.js';
import {
  HistorianRollups,
  LATE_VALUES_TOPIC,
  lateValueAnnouncements,
} from '../../src/modules/uns/rollups/rollups.js';
import { createLocalInvalidationBus } from '../../src/platform/invalidation-bus.js';
import { testDialects } from '../helpers/dialects.js';
import type { TestClient } from '../helpers/http-client.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';
import { createPat } from '../uns/uns-helpers.js';

const PUBLISH = '/api/v1/uns/data/publish';
const MINUTE_MS = 60_000;
const HOUR_MS = 3_600_000;
const DAY_MS = 86_400_000;
const TOPIC = 'v1/acme/rollup/press/speed';

interface Sample {
  tsMs: number;
  value: number | string;
  quality: 0 | 1 | 2;
}

/** A seeded generator, so that a failure repeats. */
function random(seed: number) {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

/** The raw computation: buckets of `widthMs` aligned to the epoch, numeric values in [from, to). */
function expected(samples: Sample[], fromMs: number, toMs: number, widthMs: number) {
  const out = new Map<
    number,
    { count: number; sum: number; min: number; max: number; first: Sample; last: Sample }
  >();
  for (const s of [...samples].sort((a, b) => a.tsMs - b.tsMs)) {
    if (s.tsMs < fromMs || s.tsMs >= toMs || typeof s.value !== 'number') continue;
    const start = Math.floor(s.tsMs / widthMs) * widthMs;
    const b = out.get(start);
    if (!b) out.set(start, { count: 1, sum: s.value, min: s.value, max: s.value, first: s, last: s });
    else {
      b.count++;
      b.sum += s.value;
      b.min = Math.min(b.min, s.value);
      b.max = Math.max(b.max, s.value);
      b.last = s;
    }
  }
  return [...out.entries()]
    .sort((a, b) => a[0] - b[0])
    .map(([start, b]) => ({
      bucketStartUs: start * 1000,
      count: b.count,
      avg: b.sum / b.count,
      min: b.min,
      max: b.max,
      first: b.first.value as number,
      last: b.last.value as number,
    }));
}

for (const dialect of testDialects()) {
  describe(`Historian rollups [${dialect}]`, () => {
    let server: TestServer;
    let api: TestClient;
    let topicId: number;
    const samples: Sample[] = [];
    // Ten days up to the last full hour before now, with gaps (empty buckets) and values on unit edges.
    const endMs = Math.floor(Date.now() / HOUR_MS) * HOUR_MS - HOUR_MS;
    const startMs = endMs - 10 * DAY_MS;
    const next = random(21);

    const publish = async (batch: Sample[]) => {
      for (let i = 0; i < batch.length; i += 5000) {
        const res = await api.post(`${PUBLISH}/batch`, {
          records: batch.slice(i, i + 5000).map((s) => ({
            topic: TOPIC,
            value: s.value,
            timestamp: new Date(s.tsMs).toISOString(),
            quality: s.quality,
          })),
        });
        assert.equal(res.status, 200, res.text);
      }
      samples.push(...batch);
    };
    const rollupRows = async () =>
      Number(
        (
          await server.storage.db
            .selectFrom('uns_rollups')
            .select((eb) => eb.fn.countAll().as('n'))
            .where('topic_id', '=', topicId)
            .executeTakeFirstOrThrow()
        ).n,
      );
    const check = async (fromMs: number, toMs: number, widthMs: number) => {
      const got = await server.app.uns.rollups.buckets(
        { organizationId: server.orgId, path: TOPIC, id: topicId },
        fromMs * 1000,
        toMs * 1000,
        widthMs * 1000,
        Date.now() * 1000,
      );
      // Values are multiples of 1/8 below 2^20: every sum is exact, so avg must equal exactly too.
      assert.deepEqual(got, expected(samples, fromMs, toMs, widthMs), `${fromMs}..${toMs} by ${widthMs}`);
    };

    before(async () => {
      server = await startTestServer(dialect);
      const token = await createPat(server.admin, ['uns:publish', 'uns:read', 'uns:write']);
      api = server.client.as({ token, org: server.orgId });
      const batch: Sample[] = [];
      const used = new Set<number>();
      for (let t = startMs; t < endMs; ) {
        // Mostly 20-100 s apart, sometimes a gap of hours; some values exactly on minute and hour edges.
        const r = next();
        t +=
          r < 0.01
            ? 5 * HOUR_MS
            : r < 0.05
              ? MINUTE_MS - (t % MINUTE_MS)
              : 20_000 + Math.floor(next() * 80_000);
        if (next() < 0.02) t += HOUR_MS - (t % HOUR_MS);
        if (t >= endMs || used.has(t)) continue;
        used.add(t);
        const kind = next();
        batch.push({
          tsMs: t,
          value: kind < 0.05 ? 'idle' : Math.round(next() * 8000) / 8 - 500,
          quality: kind < 0.9 ? 0 : kind < 0.95 ? 1 : 2,
        });
      }
      await publish(batch);
      const row = await server.storage.db
        .selectFrom('uns_topics')
        .select('id')
        .where('path', '=', TOPIC)
        .executeTakeFirstOrThrow();
      topicId = Number(row.id);
    });
    after(() => server?.close());

    it('answers wide ranges from rollups exactly as the raw values, edges and empty buckets included', async () => {
      assert.equal(await rollupRows(), 0);
      // Unaligned ends (raw edges), aligned ends, ends on a value, and widths of each rollup unit.
      const onValue = samples[100]!.tsMs;
      const ranges: [number, number][] = [
        [startMs - 12_345, endMs + 54_321],
        [startMs + 3 * HOUR_MS, endMs - 2 * DAY_MS],
        [onValue, samples[samples.length - 100]!.tsMs],
        [startMs + 17 * MINUTE_MS + 999, startMs + 2 * DAY_MS + 7],
      ];
      for (const [from, to] of ranges) {
        for (const width of [MINUTE_MS, 5 * MINUTE_MS, HOUR_MS, 2 * HOUR_MS, DAY_MS, 15_000]) {
          await check(from, to, width);
        }
      }
      assert.ok((await rollupRows()) > 10 * 24, 'the minute and hour rollups are filled');
    });

    it('refreshes a rolled-up unit when a value lands in it later (backfill, out of order)', async () => {
      const from = startMs - 1000;
      const to = endMs + 1000;
      await check(from, to, HOUR_MS);
      await check(from, to, 5 * MINUTE_MS);
      // Into a rolled-up hour and minute: a new minimum, a new first and last of its units, a string.
      const hour = startMs + 3 * DAY_MS + 5 * HOUR_MS;
      const taken = new Set(samples.map((s) => s.tsMs));
      const late: Sample[] = [
        { tsMs: hour, value: -100_000, quality: 2 },
        { tsMs: hour + HOUR_MS - 1, value: 99_999.5, quality: 1 },
        { tsMs: hour + 30 * MINUTE_MS + 7, value: 'stopped', quality: 0 },
        { tsMs: startMs + 5 * DAY_MS + 1, value: 12.125, quality: 0 },
      ].filter((s) => !taken.has(s.tsMs)) as Sample[];
      assert.ok(late.length >= 3);
      await publish(late);
      await check(from, to, HOUR_MS);
      await check(from, to, 5 * MINUTE_MS);
      await check(from, to, DAY_MS);
      // A value replaced at the same timestamp changes its unit too.
      const replaced = samples.find((s) => typeof s.value === 'number' && s.tsMs > startMs + 2 * DAY_MS)!;
      const res = await api.post(PUBLISH, {
        topic: TOPIC,
        value: 777.75,
        timestamp: new Date(replaced.tsMs).toISOString(),
      });
      assert.equal(res.status, 200, res.text);
      await server.app.uns.writer.settle();
      const stored = await server.storage.db
        .selectFrom('uns_values')
        .select('value_num')
        .where('topic_id', '=', topicId)
        .where('ts_us', '=', replaced.tsMs * 1000)
        .executeTakeFirstOrThrow();
      // Whatever the historian keeps for a repeated timestamp, the rollups must agree with it.
      replaced.value = Number(stored.value_num);
      await check(from, to, HOUR_MS);
      await check(from, to, MINUTE_MS);
    });

    it('drops rollups with their values under retention, and deleting the topic drops the rest', async () => {
      await check(startMs - 1000, endMs + 1000, HOUR_MS);
      const put = await server.admin.put('/api/v1/system/uns/settings', { retentionDays: 4 });
      assert.equal(put.status, 200, put.text);
      await server.app.uns.applyRetention();
      const cutoffMs = Date.now() - 4 * DAY_MS;
      const old = await server.storage.db
        .selectFrom('uns_rollups')
        .select((eb) => eb.fn.countAll().as('n'))
        .where('start_us', '<', cutoffMs * 1000 - HOUR_MS * 1000)
        .executeTakeFirstOrThrow();
      assert.equal(Number(old.n), 0);
      samples.splice(0, samples.length, ...samples.filter((s) => s.tsMs >= cutoffMs - 60_000));
      // The boundary of the cutoff moved on a little since: compare from safely after it.
      await check(cutoffMs + MINUTE_MS, endMs + 1000, HOUR_MS);
      await check(cutoffMs + MINUTE_MS, endMs + 1000, 5 * MINUTE_MS);
      assert.ok((await rollupRows()) > 0);

      const del = await api.delete(`/api/v1/uns/topics/${TOPIC}`);
      assert.ok(del.status === 204 || del.status === 200, del.text);
      assert.equal(await rollupRows(), 0);
    });

    it("purging an organization's UNS drops its rollups", async () => {
      samples.length = 0;
      await publish(
        samples.concat(
          Array.from({ length: 500 }, (_, i) => ({
            tsMs: endMs - (i + 1) * 600_000,
            value: i / 4,
            quality: 0 as const,
          })),
        ),
      );
      topicId = Number(
        (
          await server.storage.db
            .selectFrom('uns_topics')
            .select('id')
            .where('path', '=', TOPIC)
            .executeTakeFirstOrThrow()
        ).id,
      );
      await check(endMs - 4 * DAY_MS, endMs, HOUR_MS);
      assert.ok((await rollupRows()) > 0);
      await purgeOrganizationUns(server.storage.db, server.orgId);
      assert.equal(await rollupRows(), 0);
    });
  });
}

// Replicas on one PostgreSQL: late values committed by one are announced over the bus, and another's
// rolled-up units they landed in are recomputed. Two rollup keepers on the server's database stand for two
// replicas; one hears the bus, the other does not (and shows what it would serve without it).
if (testDialects().includes('postgres')) {
  describe('Historian rollups across replicas [postgres]', () => {
    let server: TestServer;
    let api: TestClient;
    const bus = createLocalInvalidationBus();
    const endMs = Math.floor(Date.now() / HOUR_MS) * HOUR_MS - HOUR_MS;
    const startMs = endMs - DAY_MS;
    const samples: Sample[] = [];

    before(async () => {
      server = await startTestServer('postgres', { bus });
      const token = await createPat(server.admin, ['uns:publish', 'uns:read']);
      api = server.client.as({ token, org: server.orgId });
      for (let t = startMs; t < endMs; t += 90_000)
        samples.push({ tsMs: t, value: (t / 90_000) % 64, quality: 0 });
      const res = await api.post(`${PUBLISH}/batch`, {
        records: samples.map((s) => ({
          topic: TOPIC,
          value: s.value,
          timestamp: new Date(s.tsMs).toISOString(),
        })),
      });
      assert.equal(res.status, 200, res.text);
    });
    after(() => server?.close());

    it('a replica recomputes the units another replica committed late values into', async () => {
      const settle = () => server.app.uns.writer.settle();
      const hearing = new HistorianRollups(server.storage.db, 'postgres', settle);
      const deaf = new HistorianRollups(server.storage.db, 'postgres', settle);
      const heard: string[] = [];
      bus.subscribe((event) => {
        if (event.topic !== LATE_VALUES_TOPIC || !event.id) return;
        heard.push(event.id);
        hearing.heard(event.id);
      });
      const id = Number(
        (
          await server.storage.db
            .selectFrom('uns_topics')
            .select('id')
            .where('path', '=', TOPIC)
            .executeTakeFirstOrThrow()
        ).id,
      );
      const read = (keeper: HistorianRollups) =>
        keeper.buckets(
          { organizationId: server.orgId, path: TOPIC, id },
          startMs * 1000,
          endMs * 1000,
          HOUR_MS * 1000,
          Date.now() * 1000,
        );
      const want = () => expected(samples, startMs, endMs, HOUR_MS);
      assert.deepEqual(await read(hearing), want());
      assert.deepEqual(await read(deaf), want());

      // A late value (five hours ago, a new maximum) committed through this server: announced on the bus.
      const late: Sample = { tsMs: startMs + 5 * HOUR_MS + 45_001, value: 1000, quality: 0 };
      const res = await api.post(PUBLISH, {
        topic: TOPIC,
        value: late.value,
        timestamp: new Date(late.tsMs).toISOString(),
      });
      assert.equal(res.status, 200, res.text);
      await settle();
      samples.push(late);
      assert.equal(heard.length, 1);
      assert.deepEqual(JSON.parse(heard[0]!), {
        o: server.orgId,
        t: [[TOPIC, late.tsMs * 1000, late.tsMs * 1000]],
      });

      // The replica that did not hear it serves its stale unit; the one that heard recomputes it.
      assert.notDeepEqual(await read(deaf), want());
      assert.deepEqual(await read(hearing), want());

      // A live value (this minute) announces nothing.
      const live = await api.post(PUBLISH, { topic: TOPIC, value: 1 });
      assert.equal(live.status, 200, live.text);
      await settle();
      assert.equal(heard.length, 1);
    });
  });
}

test('late-value announcements: one per organization, topics with their late range, `all` beyond the payload budget', () => {
  const job = (organizationId: string, records: [string, number][]) =>
    ({
      organizationId,
      records: records.map(([topic, timestampUs]) => ({ record: { topic, timestampUs } })),
    }) as unknown as CommitJob;
  const closed = 1_000_000;
  const got = lateValueAnnouncements(
    [
      job('a', [
        ['t/1', 5],
        ['t/1', 3],
        ['t/2', 999_999],
        ['t/1', 1_000_000],
      ]),
      job('b', [['t/3', 2_000_000]]),
    ],
    closed,
  );
  assert.deepEqual(
    got.map((id) => JSON.parse(id)),
    [
      {
        o: 'a',
        t: [
          ['t/1', 3, 5],
          ['t/2', 999_999, 999_999],
        ],
      },
    ],
  );
  const many = lateValueAnnouncements(
    [
      job(
        'c',
        Array.from({ length: 500 }, (_, i) => [`v1/plant/line/${i}/temperature`, i] as [string, number]),
      ),
    ],
    closed,
  );
  assert.deepEqual(
    many.map((id) => JSON.parse(id)),
    [{ o: 'c', all: true }],
  );
});
