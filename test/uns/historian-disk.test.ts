import assert from 'node:assert/strict';
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import {
  DAY_US,
  HISTORIAN_FILE,
  openHistorian,
  partitionName,
} from '../../src/modules/uns/historian/historian-layout.js';
import { CompactionJob } from '../../src/modules/uns/historian/segments/compaction-job.js';
import { reclaimDisk } from '../../src/modules/uns/historian/segments/disk-reclaim.js';
import { plantSeries } from '../../src/modules/uns/historian/segments/plant-series.js';
import { SegmentStore } from '../../src/modules/uns/historian/segments/segment-store.js';
import { openStorage, type Storage } from '../../src/storage/database.js';
import { migrateToLatest } from '../../src/storage/migrator.js';
import { createTestDatabase, type TestDatabase, testDialects } from '../helpers/dialects.js';
import { runMeridian } from '../helpers/process.js';

const DAY0 = Date.UTC(2026, 8, 1) * 1000;
const TOPICS = 40;
const DAYS = 2;
const PER_DAY = 1440; // one value a minute

async function insertHistory(storage: Storage): Promise<number> {
  const kinds = ['float', 'counter', 'state', 'boolean'] as const;
  let n = 0;
  for (let topicId = 1; topicId <= TOPICS; topicId++) {
    const series = plantSeries(kinds[topicId % 4] as (typeof kinds)[number], DAYS * PER_DAY, DAY0, topicId);
    const rows = series.map((r, i) => ({
      topic_id: topicId,
      ts_us: DAY0 + i * 60_000_000,
      value_json: r.valueJson,
      value_num: null,
      quality: r.quality,
      source: r.source,
      received_us: r.receivedUs,
    }));
    for (let i = 0; i < rows.length; i += 1000)
      await storage.db
        .insertInto('uns_values')
        .values(rows.slice(i, i + 1000))
        .execute();
    n += rows.length;
  }
  return n;
}

for (const dialect of testDialects()) {
  describe(`historian disk given back after compaction [${dialect}]`, () => {
    let database: TestDatabase;
    let storage: Storage;

    /** SQLite: the historian file's size once its WAL is checkpointed; PostgreSQL: the two days' partitions. */
    async function historianBytes(): Promise<number> {
      if (dialect === 'sqlite') {
        await sql`pragma historian.wal_checkpoint(TRUNCATE)`.execute(storage.db);
        return statSync(join(database.dataDir, HISTORIAN_FILE)).size;
      }
      let total = 0;
      for (let d = 0; d < DAYS; d++) {
        const name = partitionName((DAY0 + d * DAY_US) / DAY_US);
        const { rows } = await sql<{
          n: string;
        }>`select pg_total_relation_size(${name}::regclass) as n`.execute(storage.db);
        total += Number(rows[0]?.n);
      }
      return total;
    }

    before(async () => {
      database = await createTestDatabase(dialect);
      storage = openStorage({ dataDir: database.dataDir, databaseUrl: database.databaseUrl });
      await migrateToLatest(storage);
      const layout = await openHistorian(storage);
      await layout.ensureDays([DAY0, DAY0 + DAY_US]);
    });
    after(async () => {
      await storage?.close();
      await database?.drop();
    });

    it('a compaction gives the rows’ disk back: the historian file (incremental vacuum) or the day partitions shrink', async () => {
      if (dialect === 'sqlite') {
        const mode = await sql<{ auto_vacuum: number }>`pragma historian.auto_vacuum`.execute(storage.db);
        assert.equal(
          mode.rows[0]?.auto_vacuum,
          2,
          'a new historian file is made with auto_vacuum = INCREMENTAL',
        );
      }
      const values = await insertHistory(storage);
      const before = await historianBytes();
      const job = new CompactionJob({
        db: storage.db,
        store: new SegmentStore(storage.db, dialect),
        clock: { now: () => DAY0 / 1000 + 10 * 86_400_000 },
        settle: async () => {},
        compressAfterMs: 3_600_000,
        reclaim: (beforeUs) => reclaimDisk(storage.db, dialect, beforeUs, { stepPages: 64, pauseMs: 0 }),
      });
      const done = await job.compactCompleteDays();
      await job.lease.release();
      assert.equal(done?.values, values);
      const reclaimed = job.lastReclaim;
      assert.ok(reclaimed && reclaimed.note === undefined, JSON.stringify(reclaimed));
      if (dialect === 'sqlite') assert.ok(reclaimed.pages > 100, JSON.stringify(reclaimed));
      else assert.equal(reclaimed.partitions, DAYS);
      const afterwards = await historianBytes();
      assert.ok(afterwards < before / 2, `${before} bytes before, ${afterwards} after`);
      // Nothing of the history went with the disk.
      const held = await storage.db
        .selectFrom('uns_segments')
        .select((eb) => eb.fn.sum<number>('value_count').as('n'))
        .executeTakeFirstOrThrow();
      assert.equal(Number(held.n), values);
      // The partitions stay: a late value into a compacted day still lands.
      await storage.db
        .insertInto('uns_values')
        .values({
          topic_id: 1,
          ts_us: DAY0 + 30_000_000,
          value_json: '1',
          value_num: 1,
          quality: 0,
          source: null,
          received_us: 1,
        })
        .execute();
      const again = await reclaimDisk(storage.db, dialect, DAY0 + 10 * DAY_US);
      assert.equal(again.partitions, 0, 'a partition with a row is never truncated');
      assert.equal((await storage.db.selectFrom('uns_values').select('ts_us').execute()).length, 1);
    });

    if (dialect === 'sqlite') {
      it('a historian file made without incremental vacuum says so, and `historian compact --vacuum` switches it', async () => {
        const old = await createTestDatabase('sqlite');
        const oldStorage = openStorage({ dataDir: old.dataDir, databaseUrl: old.databaseUrl });
        try {
          // A file from before: a table in it before Meridian opened it, so auto_vacuum stays NONE.
          await sql`attach database ${join(old.dataDir, HISTORIAN_FILE)} as historian`.execute(oldStorage.db);
          await sql`create table historian.before_incremental (x integer)`.execute(oldStorage.db);
          await migrateToLatest(oldStorage);
          await openHistorian(oldStorage);
          const refused = await reclaimDisk(oldStorage.db, 'sqlite', 0);
          assert.match(refused.note ?? '', /historian compact --vacuum/);
          await oldStorage.close();
          const run = runMeridian(['historian', 'compact', '--vacuum'], {
            MERIDIAN_DATA_DIR: old.dataDir,
            DATABASE_URL: old.databaseUrl,
            MERIDIAN_UNS_COMPRESS: 'true',
          });
          assert.equal(await run.exited, 0, run.output());
          assert.match(run.output(), /auto_vacuum = INCREMENTAL/);
          const reopened = openStorage({ dataDir: old.dataDir, databaseUrl: old.databaseUrl });
          await openHistorian(reopened);
          const mode = await sql<{ auto_vacuum: number }>`pragma historian.auto_vacuum`.execute(reopened.db);
          await reopened.close();
          assert.equal(mode.rows[0]?.auto_vacuum, 2);
        } finally {
          await oldStorage.close().catch(() => {});
          await old.drop();
        }
      });
    }
  });
}
