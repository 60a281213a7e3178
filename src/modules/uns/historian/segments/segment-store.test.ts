import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import { sql } from 'kysely';
import { createTestDatabase, type TestDatabase, testDialects } from '../../../../../test/helpers/dialects.js';
import { insertHistoryRows, segmentValues } from '../../../../../test/helpers/historian-rows.js';
import { openStorage, type Storage } from '../../../../storage/database.js';
import { migrateToLatest } from '../../../../storage/migrator.js';
import { DAY_US, HISTORIAN_SCHEMA, openHistorian, STAGED_VALUES } from '../historian-layout.js';
import { CompactionJob } from './compaction-job.js';
import type { SegmentCompactor } from './compaction-thread.js';
import { plantSeries } from './plant-series.js';
import type { SegmentRow } from './segment-codec.js';
import { SegmentStore } from './segment-store.js';

const DAY0 = Date.UTC(2026, 9, 1) * 1000; // a UTC day start, epoch µs
const NOW_MS = DAY0 / 1000 + 10 * 86_400_000; // ten days later

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

    const insert = (topicId: number, series: SegmentRow[]) => insertHistoryRows(storage, topicId, series);

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

    const segmentsOf = (topicId: number) => segmentValues(storage.db, topicId);

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

    it('finds the topics with rows before the horizon, each with its oldest, and nothing else', async () => {
      const horizon = job('a').horizonUs(NOW_MS);
      await insert(40, plantSeries('float', 100, DAY0 + DAY_US + 5, 10));
      await insert(3, plantSeries('float', 100, DAY0 + 2 * DAY_US, 11));
      await insert(3, plantSeries('float', 100, DAY0 + 7, 12));
      await insert(17, plantSeries('state', 100, NOW_MS * 1000 - 600_000_000, 13));
      assert.deepEqual(await store.seriesBefore(horizon), [
        { topicId: 3, firstUs: DAY0 + 7 },
        { topicId: 40, firstUs: DAY0 + DAY_US + 5 },
      ]);
      assert.deepEqual(await store.seriesBefore(DAY0 + DAY_US), [{ topicId: 3, firstUs: DAY0 + 7 }]);
      assert.equal(await store.hasRowsBefore(horizon), true);
      assert.equal(await store.hasRowsBefore(DAY0 + 7), false, 'the oldest row is not before itself');
      assert.equal(await store.hasRowsBefore(DAY0 + 8), true);
    });

    if (dialect === 'sqlite') {
      it('counts a row still staged by the historian thread as a row to compact (settle merges it)', async () => {
        const staged = sql.raw(`${HISTORIAN_SCHEMA}.${STAGED_VALUES}`);
        await sql`insert into ${staged} (topic_id, ts_us, value_json, value_num, quality, source, received_us)
          values (5, ${DAY0}, '1', 1, 0, null, ${DAY0})`.execute(storage.db);
        try {
          assert.equal(await store.hasRowsBefore(DAY0 + 1), true);
          assert.equal(await store.hasRowsBefore(DAY0), false);
        } finally {
          await sql`delete from ${staged}`.execute(storage.db);
        }
      });
    }

    /** The store, counting what the job asks of it. */
    function counted(calls: string[], onCompact: () => void = () => {}): SegmentCompactor {
      return {
        seriesBefore: (beforeUs) => {
          calls.push('series');
          return store.seriesBefore(beforeUs);
        },
        nextRowAt: (topicId, fromUs, beforeUs) => {
          calls.push('next');
          return store.nextRowAt(topicId, fromUs, beforeUs);
        },
        compactDay: (topicId, dayUs, dryRun) => {
          calls.push('compact');
          onCompact();
          return store.compactDay(topicId, dayUs, dryRun);
        },
      };
    }

    it('with nothing before the horizon, a run asks the compactor (thread) nothing and takes no lease', async () => {
      const calls: string[] = [];
      const settles: number[] = [];
      const deps = {
        db: storage.db,
        store: counted(calls),
        clock: { now: () => now.ms },
        settle: async () => void settles.push(1),
        compressAfterMs: 3_600_000,
        replicaId: 'a',
        hasRowsBefore: (beforeUs: number) => store.hasRowsBefore(beforeUs),
      };
      await insert(1, plantSeries('float', 100, NOW_MS * 1000 - 600_000_000, 14));
      assert.deepEqual(await new CompactionJob(deps).compactCompleteDays(), {
        values: 0,
        segments: 0,
        rowBytes: 0,
        segmentBytes: 0,
      });
      assert.deepEqual(calls, []);
      assert.deepEqual(settles, []);
      assert.deepEqual(await storage.db.selectFrom('job_leases').selectAll().execute(), []);
      const old = plantSeries('float', 100, DAY0, 15);
      await insert(2, old);
      assert.equal((await new CompactionJob(deps).compactCompleteDays())?.values, 100);
      assert.deepEqual(calls, ['series', 'compact', 'next']);
      assert.deepEqual(settles, [1]);
      assert.deepEqual(await segmentsOf(2), old);
    });

    it('an aborted run stops after the day in hand; the next run compacts the rest', async () => {
      const days = [0, 1, 2].map((d) => plantSeries('float', 200, DAY0 + d * DAY_US, 16 + d));
      for (const day of days) await insert(1, day);
      const stopping = new AbortController();
      const calls: string[] = [];
      const deps = {
        db: storage.db,
        store: counted(calls, () => stopping.abort()),
        clock: { now: () => now.ms },
        settle: async () => {},
        compressAfterMs: 3_600_000,
        replicaId: 'a',
      };
      const first = await new CompactionJob(deps).compactCompleteDays({ signal: stopping.signal });
      assert.equal(first?.values, 200, 'the day in hand, whole');
      assert.deepEqual(await segmentsOf(1), days[0]);
      assert.deepEqual(await rowsOf(1), [...days[1]!, ...days[2]!]);
      const rest = await new CompactionJob({ ...deps, store }).compactCompleteDays();
      assert.equal(rest?.values, 400);
      assert.deepEqual(await segmentsOf(1), days.flat());
      assert.deepEqual(await rowsOf(1), []);
    });
  });
}
