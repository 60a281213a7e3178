import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import { createTestDatabase, type TestDatabase, testDialects } from '../../../../../test/helpers/dialects.js';
import { openStorage, type Storage } from '../../../../storage/database.js';
import { migrateToLatest } from '../../../../storage/migrator.js';
import { DAY_US, openHistorian } from '../historian-layout.js';
import { CompactionJob } from './compaction-job.js';
import { plantSeries } from './plant-series.js';
import { decodeSegment, type SegmentRow } from './segment-codec.js';
import { SegmentStore } from './segment-store.js';

const DAY0 = Date.UTC(2026, 9, 1) * 1000; // a UTC day start, epoch µs
const NOW_MS = DAY0 / 1000 + 10 * 86_400_000; // ten days later

function asRows(topicId: number, series: SegmentRow[]) {
  return series.map((r) => ({
    topic_id: topicId,
    ts_us: r.tsUs,
    value_json: r.valueJson,
    value_num: typeof JSON.parse(r.valueJson) === 'number' ? Number(r.valueJson) : null,
    quality: r.quality,
    source: r.source,
    received_us: r.receivedUs,
  }));
}

for (const dialect of testDialects()) {
  describe(`historian segments: compaction [${dialect}]`, () => {
    let database: TestDatabase;
    let storage: Storage;
    let store: SegmentStore;
    const now = { ms: NOW_MS };
    const job = (replicaId: string, compressAfterMs = 3_600_000) =>
      new CompactionJob({
        db: storage.db,
        store,
        clock: { now: () => now.ms },
        settle: async () => {},
        compressAfterMs,
        replicaId,
      });

    async function insert(topicId: number, series: SegmentRow[]): Promise<void> {
      const layout = await openHistorian(storage);
      await layout.ensureDays(series.map((r) => r.tsUs));
      const rows = asRows(topicId, series);
      for (let i = 0; i < rows.length; i += 500) {
        await storage.db
          .insertInto('uns_values')
          .values(rows.slice(i, i + 500))
          .onConflict((oc) =>
            oc.columns(['topic_id', 'ts_us']).doUpdateSet((eb) => ({
              value_json: eb.ref('excluded.value_json'),
              quality: eb.ref('excluded.quality'),
              received_us: eb.ref('excluded.received_us'),
            })),
          )
          .execute();
      }
    }

    async function rowsOf(topicId: number): Promise<SegmentRow[]> {
      const rows = await storage.db
        .selectFrom('uns_values')
        .selectAll()
        .where('topic_id', '=', topicId)
        .orderBy('ts_us')
        .execute();
      return rows.map((r) => ({
        tsUs: Number(r.ts_us),
        valueJson: r.value_json,
        quality: Number(r.quality),
        source: r.source,
        receivedUs: Number(r.received_us),
      }));
    }

    async function segmentsOf(topicId: number): Promise<SegmentRow[]> {
      const segments = await storage.db
        .selectFrom('uns_segments')
        .selectAll()
        .where('topic_id', '=', topicId)
        .orderBy('day_us')
        .execute();
      return segments.flatMap((s) => decodeSegment(s.data));
    }

    before(async () => {
      database = await createTestDatabase(dialect);
      storage = openStorage({ dataDir: database.dataDir, databaseUrl: database.databaseUrl });
      await migrateToLatest(storage);
      await openHistorian(storage);
      store = new SegmentStore(storage.db, dialect);
    });
    beforeEach(async () => {
      now.ms = NOW_MS;
      await storage.db.deleteFrom('uns_values').execute();
      await storage.db.deleteFrom('uns_segments').execute();
      await storage.db.deleteFrom('job_leases').execute();
    });
    after(async () => {
      await storage?.close();
      await database?.drop();
    });

    it('moves complete days into one segment a topic and day, exactly, and leaves the recent rows', async () => {
      const old = plantSeries('float', 2 * 86_400, DAY0, 1).filter((_, i) => i % 20 === 0);
      const recent = plantSeries('state', 100, NOW_MS * 1000 - 600_000_000, 2);
      await insert(1, [...old, ...recent]);
      await insert(2, plantSeries('counter', 500, DAY0 + 3 * DAY_US, 3));
      const figures = await job('a').compactCompleteDays();
      assert.ok(figures);
      assert.equal(figures.values, old.length + 500);
      assert.equal(figures.segments, 3);
      assert.ok(figures.segmentBytes < figures.rowBytes / 5, JSON.stringify(figures));
      assert.deepEqual(await segmentsOf(1), old);
      assert.deepEqual(await rowsOf(1), recent, 'the day not yet complete stays rows');
      assert.deepEqual(await segmentsOf(2), plantSeries('counter', 500, DAY0 + 3 * DAY_US, 3));
      assert.deepEqual(await rowsOf(2), []);
      assert.deepEqual(await store.figures(), { ...figures, segments: 3 });
    });

    it('a dry run measures and changes nothing', async () => {
      const series = plantSeries('boolean', 1000, DAY0, 4);
      await insert(1, series);
      const figures = await job('a').compactCompleteDays({ dryRun: true });
      assert.equal(figures?.values, 1000);
      assert.deepEqual(await rowsOf(1), series);
      assert.deepEqual(await segmentsOf(1), []);
    });

    it('merges a late value and a backfill into the compressed day: the row replaces the same timestamp', async () => {
      const series = plantSeries('float', 1000, DAY0, 5);
      await insert(1, series);
      await job('a').compactCompleteDays();
      const late = {
        tsUs: DAY0 + 500_000,
        valueJson: '"late"',
        quality: 1,
        source: 'backfill',
        receivedUs: DAY0 + 9,
      };
      const replaced = { ...(series[10] as SegmentRow), valueJson: '99.5', receivedUs: DAY0 + 7 };
      const backfill = plantSeries('float', 50, DAY0 + 2_000_000_000, 6);
      await insert(1, [late, replaced, ...backfill]);
      await job('a').compactCompleteDays();
      const expected = [...series, late, ...backfill];
      expected[10] = replaced;
      expected.sort((a, b) => a.tsUs - b.tsUs);
      assert.deepEqual(await segmentsOf(1), expected);
      assert.deepEqual(await rowsOf(1), []);
      assert.equal((await store.figures()).segments, 1);
    });

    it('retention drops whole segments and cuts the one across the cut-off', async () => {
      const series = plantSeries('counter', 3 * 1440, DAY0, 7).map((r, i) => ({
        ...r,
        tsUs: DAY0 + i * 60_000_000,
      }));
      await insert(1, series);
      await job('a').compactCompleteDays();
      assert.equal((await store.figures()).segments, 3);
      const cutoff = DAY0 + DAY_US + 12 * 3_600_000_000; // noon of the second day
      const dropped = await store.dropBefore(cutoff);
      assert.equal(dropped, 1440 + 720);
      assert.deepEqual(
        await segmentsOf(1),
        series.filter((r) => r.tsUs >= cutoff),
      );
      assert.equal((await store.figures()).segments, 2);
    });

    it('two replicas compacting at once: one holds the lease and does it, nothing doubled or lost', async () => {
      const series = plantSeries('float', 3000, DAY0, 8);
      await insert(1, series);
      await insert(2, series);
      const [a, b] = await Promise.all([job('a').compactCompleteDays(), job('b').compactCompleteDays()]);
      assert.equal([a, b].filter((f) => f === null).length, 1, 'one replica finds the lease taken');
      assert.equal((a ?? b)?.values, 6000);
      assert.deepEqual(await segmentsOf(1), series);
      assert.deepEqual(await segmentsOf(2), series);
    });

    it('two compactions of one day without a lease: every value once', async () => {
      const series = plantSeries('float', 3000, DAY0, 9);
      await insert(1, series);
      const results = await Promise.all([store.compactDay(1, DAY0), store.compactDay(1, DAY0)]);
      assert.equal(results[0].values + results[1].values, 3000);
      assert.deepEqual(await segmentsOf(1), series);
      assert.deepEqual(await rowsOf(1), []);
    });
  });
}
