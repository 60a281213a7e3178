import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import {
  createTestDatabase,
  type TestDatabase,
  testDialects,
} from '../../../../../../test/helpers/dialects.js';
import { openStorage, type Storage } from '../../../../../storage/database.js';
import { migrateToLatest } from '../../../../../storage/migrator.js';
import { DataRepository } from '../../../reading/data.repository.js';
import { DAY_US, openHistorian } from '../../historian-layout.js';
import { encodeSegment, type SegmentRow } from '../segment-codec.js';
import { SegmentStore } from '../segment-store.js';
import { SegmentCache, segmentCache } from './segment-cache.js';

const DAY0 = Date.UTC(2026, 9, 1) * 1000; // a UTC day start, epoch µs
const STEP_US = 60_000_000;
const TOPIC = 7;

/** 100 values a minute apart from `DAY0`, each `base + i / 100` (two decimals, one length). */
function series(base: number): SegmentRow[] {
  return Array.from({ length: 100 }, (_, i) => ({
    tsUs: DAY0 + i * STEP_US,
    valueJson: JSON.stringify(base + i / 100),
    quality: 0,
    source: null,
    receivedUs: DAY0 + i * STEP_US + 5,
  }));
}

for (const dialect of testDialects()) {
  describe(`historian segments: decode cache [${dialect}]`, () => {
    let database: TestDatabase;
    let storage: Storage;
    /** A second replica: its own connection to the same database. */
    let other: Storage;
    let reads: DataRepository;

    async function insert(db: Storage, rows: SegmentRow[]): Promise<void> {
      await db.db
        .insertInto('uns_values')
        .values(
          rows.map((r) => ({
            topic_id: TOPIC,
            ts_us: r.tsUs,
            value_json: r.valueJson,
            value_num: Number(r.valueJson),
            quality: r.quality,
            source: r.source,
            received_us: r.receivedUs,
          })),
        )
        .execute();
    }
    /** The whole day's values as history pages answer them, and its one-hour bucket averages. */
    async function read() {
      const page = await reads.range({
        topicId: TOPIC,
        fromUs: DAY0,
        toUs: DAY0 + DAY_US,
        order: 'asc',
        limit: 1000,
        afterUs: null,
      });
      const buckets = await reads.buckets(TOPIC, DAY0, DAY0 + DAY_US, 3_600_000_000);
      return { values: page.map((r) => r.value_json), sums: buckets.map((b) => [b.count, b.min, b.max]) };
    }

    before(async () => {
      database = await createTestDatabase(dialect);
      storage = openStorage({ dataDir: database.dataDir, databaseUrl: database.databaseUrl });
      await migrateToLatest(storage);
      await (await openHistorian(storage)).ensureDays([DAY0]);
      other = openStorage({ dataDir: database.dataDir, databaseUrl: database.databaseUrl });
      await openHistorian(other);
      reads = new DataRepository(storage.db);
      await insert(storage, series(20));
      await new SegmentStore(storage.db, dialect).compactDay(TOPIC, DAY0);
    });
    after(async () => {
      await other?.close();
      await storage?.close();
      await database?.drop();
    });

    it('serves a segment read again from the cache', async () => {
      const first = await read();
      assert.equal(first.values.length, 100);
      assert.equal(first.values[1], '20.01');
      const hits = segmentCache.hits;
      assert.deepEqual(await read(), first);
      assert.ok(segmentCache.hits >= hits + 2, 'the page and the buckets came from the cache');
    });

    it('a late value merged into the segment is read at once, not the cached decoding', async () => {
      await read();
      const late = { ...(series(20)[3] as SegmentRow), valueJson: '99.99' }; // same length, same count
      await insert(storage, [late]);
      await new SegmentStore(storage.db, dialect).compactDay(TOPIC, DAY0);
      const after = await read();
      assert.equal(after.values.length, 100);
      assert.equal(after.values[3], '99.99');
      assert.deepEqual(after.sums[0], [60, 20, 99.99]);
    });

    it("another replica's rewrite of a segment (same days, counts, times and byte sizes) is read at once", async () => {
      // Only `data` changes: what a key of topic, day, count, times or lengths would not see.
      const rewrite = (rows: SegmentRow[]) =>
        other.db
          .updateTable('uns_segments')
          .set({ data: Buffer.from(encodeSegment(rows)) })
          .where('topic_id', '=', TOPIC)
          .execute();
      await rewrite(series(20));
      assert.deepEqual(
        (await read()).values,
        series(20).map((r) => r.valueJson),
      );
      assert.equal(
        encodeSegment(series(20)).length,
        encodeSegment(series(30)).length,
        'the same byte length',
      );
      await rewrite(series(30));
      const after = await read();
      assert.deepEqual(
        after.values,
        series(30).map((r) => r.valueJson),
      );
      assert.deepEqual(after.sums[0], [60, 30, 30.59]);
    });

    it('retention cutting the day and a purge of the segment are read at once', async () => {
      await read();
      await new SegmentStore(other.db, dialect).dropBefore(DAY0 + 90 * STEP_US);
      assert.deepEqual(
        (await read()).values,
        series(30)
          .slice(90)
          .map((r) => r.valueJson),
      );
      await other.db.deleteFrom('uns_segments').where('topic_id', '=', TOPIC).execute();
      assert.deepEqual(await read(), { values: [], sums: [] });
    });

    it('keeps at most its bound of bytes, the least recently used out first', async () => {
      const cache = new SegmentCache(1);
      const a = encodeSegment(series(1));
      cache.columns(1, DAY0, a);
      assert.deepEqual(cache.size, { entries: 0, bytes: 0 }, 'a segment over the bound is not kept');
      cache.resize(1 << 20);
      cache.columns(1, DAY0, a);
      cache.columns(2, DAY0, encodeSegment(series(2)));
      const one = cache.size.bytes / 2;
      cache.columns(1, DAY0, a); // 1 is now the most recently used
      cache.resize(Math.ceil(one * 1.5));
      assert.equal(cache.size.entries, 1);
      const misses = cache.misses;
      cache.columns(1, DAY0, a);
      assert.equal(cache.misses, misses, 'the most recently used stayed');
    });
  });
}
