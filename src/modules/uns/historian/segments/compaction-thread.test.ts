import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { getPriority } from 'node:os';
import { after, before, beforeEach, describe, it } from 'node:test';
import type { Kysely } from 'kysely';
import { createTestDatabase, type TestDatabase, testDialects } from '../../../../../test/helpers/dialects.js';
import { insertHistoryRows, segmentValues } from '../../../../../test/helpers/historian-rows.js';
import { openStorage, type Storage } from '../../../../storage/database.js';
import { migrateToLatest } from '../../../../storage/migrator.js';
import type { Database } from '../../../../storage/tables.js';
import { DAY_US, type HistorianLayout, openHistorian } from '../historian-layout.js';
import { CompactionJob } from './compaction-job.js';
import { CompactionThread, type SegmentCompactor, segmentCompactor } from './compaction-thread.js';
import { plantSeries } from './plant-series.js';
import type { SegmentRow } from './segment-codec.js';
import { SegmentStore } from './segment-store.js';

const DAY0 = Date.UTC(2026, 9, 1) * 1000; // a UTC day start, epoch µs
const NOW_MS = DAY0 / 1000 + 10 * 86_400_000;

for (const dialect of testDialects()) {
  describe(`historian segments: compaction on its own thread [${dialect}]`, () => {
    let database: TestDatabase;
    let storage: Storage;
    let layout: HistorianLayout;
    let store: SegmentStore;
    let compactor: SegmentCompactor;

    const job = (on: SegmentCompactor, replicaId = 'a') =>
      new CompactionJob({
        db: storage.db,
        store: on,
        clock: { now: () => NOW_MS },
        settle: async () => {},
        compressAfterMs: 3_600_000,
        replicaId,
      });

    const insert = (topicId: number, series: SegmentRow[], db: Kysely<Database> = storage.db) =>
      insertHistoryRows(storage, topicId, series, db);
    const segmentsOf = (topicId: number) => segmentValues(storage.db, topicId);

    const rowCount = async () =>
      (await storage.db.selectFrom('uns_values').select('topic_id').execute()).length;

    before(async () => {
      database = await createTestDatabase(dialect);
      storage = openStorage({ dataDir: database.dataDir, databaseUrl: database.databaseUrl });
      await migrateToLatest(storage);
      layout = await openHistorian(storage);
      store = new SegmentStore(storage.db, dialect);
      compactor = segmentCompactor(storage, layout, store, database.databaseUrl);
    });
    beforeEach(async () => {
      await storage.db.deleteFrom('uns_values').execute();
      await storage.db.deleteFrom('uns_segments').execute();
      await storage.db.deleteFrom('job_leases').execute();
    });
    after(async () => {
      await compactor?.close?.();
      await storage?.close();
      await database?.drop();
    });

    it('runs on a thread for a database file or server, and compacts there exactly what the event loop would', async () => {
      assert.ok(compactor instanceof CompactionThread, 'a file (SQLite) or a server (PostgreSQL): a thread');
      const floats = plantSeries('float', 3000, DAY0, 1);
      const states = plantSeries('state', 2000, DAY0 + DAY_US, 2);
      await insert(1, floats);
      await insert(2, states);
      const dry = await job(compactor).compactCompleteDays({ dryRun: true });
      assert.equal(dry?.values, 5000);
      assert.equal(await rowCount(), 5000, 'a dry run on the thread changes nothing');
      const figures = await job(compactor).compactCompleteDays();
      assert.equal(figures?.values, 5000);
      assert.equal(figures?.segments, 2);
      assert.deepEqual(await segmentsOf(1), floats);
      assert.deepEqual(await segmentsOf(2), states);
      assert.equal(await rowCount(), 0);
      assert.deepEqual(await store.figures(), figures);
    });

    it('merges a late value into its compressed day on the thread', async () => {
      const series = plantSeries('counter', 1000, DAY0, 3);
      await insert(1, series);
      await job(compactor).compactCompleteDays();
      const late = { tsUs: DAY0 + 1, valueJson: '"late"', quality: 2, source: 'backfill', receivedUs: 5 };
      await insert(1, [late]);
      const done = await compactor.compactDay(1, DAY0);
      assert.equal(done.values, 1);
      assert.deepEqual(
        await segmentsOf(1),
        [...series, late].sort((a, b) => a.tsUs - b.tsUs),
      );
      assert.equal(await rowCount(), 0);
    });

    it('a value committed between the read and the transaction is moved too (the day is encoded again)', async () => {
      const series = plantSeries('float', 1000, DAY0, 4);
      await insert(1, series);
      const late = { tsUs: DAY0 + 7, valueJson: '12.5', quality: 0, source: null, receivedUs: 9 };
      // The store's reads run first; the value lands just before its transaction begins.
      const racing = new Proxy(storage.db, {
        get(target, property) {
          if (property !== 'transaction') {
            const value = Reflect.get(target, property, target);
            return typeof value === 'function' ? value.bind(target) : value;
          }
          return () => ({
            execute: async (work: (trx: Kysely<Database>) => Promise<unknown>) => {
              await insert(1, [late], target);
              return target.transaction().execute(work);
            },
          });
        },
      });
      const done = await new SegmentStore(racing, dialect).compactDay(1, DAY0);
      assert.equal(done.values, 1001);
      assert.deepEqual(
        await segmentsOf(1),
        [...series, late].sort((a, b) => a.tsUs - b.tsUs),
      );
      assert.equal(await rowCount(), 0);
    });

    it('keeps the event loop free: its longest stall is a fraction of compacting on the event loop', async () => {
      const day = (topicId: number) =>
        plantSeries('float', 86_400, DAY0 + topicId * DAY_US, topicId).map((r, i) => ({
          ...r,
          tsUs: DAY0 + topicId * DAY_US + i * 1_000_000,
        }));
      /** The longest gap between two turns of a 1 ms timer while `work` runs. */
      const longestStall = async (work: () => Promise<unknown>): Promise<number> => {
        let last = performance.now();
        let longest = 0;
        const timer = setInterval(() => {
          const now = performance.now();
          longest = Math.max(longest, now - last);
          last = now;
        }, 1);
        try {
          await work();
        } finally {
          clearInterval(timer);
        }
        // The gap up to the end counts too (work that never yielded let the timer run not once).
        return Math.max(longest, performance.now() - last);
      };
      await insert(1, day(1));
      await insert(2, day(2));
      await insert(3, day(3));
      const onLoop = await longestStall(() => store.compactDay(1, DAY0 + DAY_US));
      // The better of two days: on a busy machine the event loop's thread may wait that long for a core
      // once, whatever runs where (a stall of the work itself comes back every time).
      const onThread = Math.min(
        await longestStall(() => compactor.compactDay(2, DAY0 + 2 * DAY_US)),
        await longestStall(() => compactor.compactDay(3, DAY0 + 3 * DAY_US)),
      );
      assert.deepEqual(await segmentsOf(2), day(2));
      assert.deepEqual(await segmentsOf(3), day(3));
      assert.ok(
        onThread < onLoop / 3,
        `longest stall ${onThread.toFixed(1)} ms on the thread against ${onLoop.toFixed(1)} ms on the event loop`,
      );
    });

    it("runs at the lowest priority (Linux: niceness 19 from the thread's start)", async (t) => {
      if (process.platform !== 'linux') return t.skip('thread priorities are read from /proc');
      /** A thread's niceness, as the scheduler sees it (field 19 of its stat). */
      const nicenessOf = (tid: string) => {
        const stat = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
        return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]);
      };
      const niceness = () => readdirSync('/proc/self/task').map(nicenessOf);
      await compactor.seriesBefore(0);
      assert.ok(niceness().includes(19), `threads at ${niceness().join(', ')}`);
      // The event loop's thread by its id (the process id; the listing's order is not the threads' age)
      // keeps the niceness this process was started with, its parent's.
      assert.equal(
        nicenessOf(String(process.pid)),
        getPriority(process.ppid),
        'the event loop keeps its priority',
      );
    });
  });
}
