import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import { CompiledQuery } from 'kysely';
import { createTestDatabase, type TestDatabase } from '../../../../../test/helpers/dialects.js';
import { insertHistoryRows, segmentValues } from '../../../../../test/helpers/historian-rows.js';
import { openStorage, type Storage } from '../../../../storage/database.js';
import { migrateToLatest } from '../../../../storage/migrator.js';
import { DAY_US, HISTORIAN_SCHEMA, type HistorianLayout, openHistorian } from '../historian-layout.js';
import { SqliteHistorianThread } from '../sqlite-historian-thread.js';
import { type CommitPreparedDay, CompactionThread, segmentCompactor } from './compaction-thread.js';
import { dayFingerprintSql, fingerprintOf } from './day-fingerprint.js';
import { plantSeries } from './plant-series.js';
import type { SegmentRow } from './segment-codec.js';
import { type PreparedDay, SegmentStore } from './segment-store.js';

const DAY0 = Date.UTC(2026, 9, 1) * 1000; // a UTC day start, epoch µs

// The SQLite server prepares a day on the compaction thread and moves it on the historian thread
// (SqliteHistorianThread.commitCompaction). PostgreSQL moves it in one transaction of the compaction
// thread's connection (compaction-thread.test.ts runs that on both databases).
describe('historian segments: a day prepared on the compaction thread, moved on the historian thread [sqlite]', () => {
  let database: TestDatabase;
  let storage: Storage;
  let layout: HistorianLayout;
  let historian: SqliteHistorianThread;
  let store: SegmentStore;
  const threads: CompactionThread[] = [];

  /** A compaction thread whose days are moved by `commit` (default: the historian thread's). */
  function compactorWith(commit: CommitPreparedDay = (day) => historian.commitCompaction(day)) {
    const compactor = segmentCompactor(storage, layout, store, undefined, { commitCompaction: commit });
    assert.ok(compactor instanceof CompactionThread);
    threads.push(compactor);
    return compactor;
  }

  const insert = (topicId: number, series: SegmentRow[]) => insertHistoryRows(storage, topicId, series);
  const segmentOf = (topicId: number) => segmentValues(storage.db, topicId);

  const rowCount = async () =>
    (await storage.db.selectFrom('uns_values').select('topic_id').execute()).length;

  before(async () => {
    database = await createTestDatabase('sqlite');
    storage = openStorage({ dataDir: database.dataDir, databaseUrl: undefined });
    await migrateToLatest(storage);
    layout = await openHistorian(storage);
    store = new SegmentStore(storage.db, 'sqlite');
    historian = new SqliteHistorianThread(storage.location, layout.location);
  });
  beforeEach(async () => {
    await storage.db.deleteFrom('uns_values').execute();
    await storage.db.deleteFrom('uns_segments').execute();
  });
  after(async () => {
    for (const thread of threads) await thread.close();
    await historian?.close();
    await storage?.close();
    await database?.drop();
  });

  it('the fingerprint of rows as read equals the SQL one of the rows stored, edge values too', async () => {
    const rows: SegmentRow[] = [
      { tsUs: -DAY_US - 1, valueJson: '"ä€😀"', quality: 2, source: '', receivedUs: -3 },
      { tsUs: -1, valueJson: '-0', quality: 0, source: null, receivedUs: 2 ** 52 + 1 },
      { tsUs: 0, valueJson: '{"a":[1,null]}', quality: 1, source: 'plc-😀', receivedUs: 0 },
      ...plantSeries('float', 2000, DAY0, 5),
    ];
    await insert(1, rows);
    const table = `${HISTORIAN_SCHEMA}.uns_values`;
    for (const [from, to, expected] of [
      [-2 * DAY_US, DAY_US, rows.slice(0, 3)],
      [DAY0, DAY0 + DAY_US, rows.slice(3)],
      [DAY0 + DAY_US, DAY0 + 2 * DAY_US, []],
    ] as const) {
      const query = CompiledQuery.raw(dayFingerprintSql(table), [1, from, to]);
      const result = await storage.db.executeQuery<Record<string, number>>(query);
      assert.deepEqual(Object.values(result.rows[0] ?? {}).map(Number), fingerprintOf(expected));
    }
    // A replaced value (a later publish: a later receipt time) changes it, whatever its length.
    const replaced = rows.map((r, i) => (i === 4 ? { ...r, receivedUs: r.receivedUs + 1 } : r));
    assert.notDeepEqual(fingerprintOf(replaced), fingerprintOf(rows));
  });

  it('moves a day on the historian thread: rows out, exactly those values in the segment', async () => {
    const series = plantSeries('float', 3000, DAY0, 1);
    await insert(1, series);
    const moved: PreparedDay[] = [];
    const compactor = compactorWith(async (day) => {
      moved.push(day);
      return historian.commitCompaction(day);
    });
    const figures = await compactor.compactDay(1, DAY0);
    assert.equal(figures.values, 3000);
    assert.equal(moved.length, 1, 'prepared once, moved by the historian thread');
    assert.deepEqual(await segmentOf(1), series);
    assert.equal(await rowCount(), 0);
    // A late value merges into the segment the same way.
    const late = { tsUs: DAY0 + 1, valueJson: '"late"', quality: 2, source: 'backfill', receivedUs: 5 };
    await insert(1, [late]);
    assert.equal((await compactor.compactDay(1, DAY0)).values, 1);
    assert.deepEqual(
      await segmentOf(1),
      [...series, late].sort((a, b) => a.tsUs - b.tsUs),
    );
    assert.equal(await rowCount(), 0);
  });

  it('a value committed between the preparation and the move: nothing changes, the day is prepared again, nothing lost', async () => {
    const series = plantSeries('counter', 1000, DAY0, 2);
    await insert(1, series);
    const added = { tsUs: DAY0 + 3, valueJson: '7', quality: 0, source: null, receivedUs: 10 };
    // A replacement: the same time published again later (the row's length stays the same).
    const replacement = {
      ...(series[10] as SegmentRow),
      receivedUs: (series[10] as SegmentRow).receivedUs + 1,
    };
    const answers: boolean[] = [];
    const compactor = compactorWith(async (day) => {
      if (answers.length === 0) await insert(1, [added]);
      if (answers.length === 1) await insert(1, [replacement]);
      const answer = await historian.commitCompaction(day);
      answers.push(answer);
      if (!answer) {
        assert.equal(await rowCount(), 1001, 'a refused move changes no row');
        assert.deepEqual(await segmentOf(1), [], 'nor the segment');
      }
      return answer;
    });
    const figures = await compactor.compactDay(1, DAY0);
    assert.deepEqual(answers, [false, false, true]);
    assert.equal(figures.values, 1001);
    const expected = [...series, added]
      .sort((a, b) => a.tsUs - b.tsUs)
      .map((r) => (r.tsUs === replacement.tsUs ? replacement : r));
    assert.deepEqual(await segmentOf(1), expected);
    assert.equal(await rowCount(), 0);
  });

  it('a segment changed meanwhile is refused; after three refusals the compaction thread moves the day itself', async () => {
    const series = plantSeries('state', 500, DAY0, 3);
    await insert(1, series.slice(0, 250));
    await compactorWith().compactDay(1, DAY0);
    await insert(1, series.slice(250));
    let attempts = 0;
    const compactor = compactorWith(async (day) => {
      attempts++;
      // Another move of the same day's segment lands first (a late merge): this one's segment is stale.
      const other = { ...day, segmentRead: new Uint8Array([1, 2, 3]) };
      return historian.commitCompaction(other);
    });
    const figures = await compactor.compactDay(1, DAY0);
    assert.equal(attempts, 3);
    assert.equal(figures.values, 250, 'moved by the compaction thread in a transaction of its own');
    assert.deepEqual(await segmentOf(1), series);
    assert.equal(await rowCount(), 0);
  });

  it('a day without rows: nothing is prepared or moved', async () => {
    let calls = 0;
    const compactor = compactorWith(async (day) => {
      calls++;
      return historian.commitCompaction(day);
    });
    assert.deepEqual(await compactor.compactDay(1, DAY0), {
      values: 0,
      segments: 0,
      rowBytes: 0,
      segmentBytes: 0,
    });
    assert.equal(calls, 0);
  });
});
