/**
 * Issue 38: reads over compressed segments against the same values as rows (baseline, same run, same
 * database): one topic's history over one day (86,400 values, paged 1,000 at a time as the API pages),
 * and 1-hour buckets over 30 days (the aggregate endpoint's query, and a dashboard's rollups computed
 * cold). Two topics hold the same float series; one is compacted, the other stays rows. Target: the
 * segments faster (ratio rows time / segments time > 1), with the decode cache warm (a page after the
 * first, a dashboard refreshed) and emptied before each run. Segments and rows must answer the very same
 * values and buckets (the bench stops otherwise).
 *
 *   node --import tsx bench/historian/segments-reads.bench.ts
 *   BENCH_DIALECTS=sqlite DAY_VALUES=2000 MONTH_DAYS=2 MONTH_STEP_S=600 REPEAT=1 node --import tsx bench/historian/segments-reads.bench.ts   (tiny)
 */
import { loadavg } from 'node:os';
import { DAY_US, openHistorian } from '../../src/modules/uns/historian/historian-layout.js';
import { segmentCache } from '../../src/modules/uns/historian/segments/decoded/segment-cache.js';
import { plantSeries } from '../../src/modules/uns/historian/segments/plant-series.js';
import { SegmentStore } from '../../src/modules/uns/historian/segments/segment-store.js';
import { DataRepository } from '../../src/modules/uns/reading/data.repository.js';
import { HistorianRollups } from '../../src/modules/uns/rollups/rollups.js';
import { openStorage, type Storage } from '../../src/storage/database.js';
import { migrateToLatest } from '../../src/storage/migrator.js';
import { createTestDatabase } from '../../test/helpers/dialects.js';

const DAY_VALUES = Number(process.env.DAY_VALUES ?? 86_400);
const MONTH_DAYS = Number(process.env.MONTH_DAYS ?? 30);
const MONTH_STEP_S = Number(process.env.MONTH_STEP_S ?? 10);
const REPEAT = Number(process.env.REPEAT ?? 5);
const DAY0 = Date.UTC(2026, 0, 5) * 1000;
const HOUR_US = 3_600_000_000;

/** Topics 1 and 2: the day series (1 s apart); 3 and 4: the month series. Odd ids get compacted. */
async function load(storage: Storage): Promise<void> {
  const series = (count: number, stepUs: number, seed: number) =>
    plantSeries('float', count, DAY0, seed).map((r, i) => ({ ...r, tsUs: DAY0 + i * stepUs }));
  const day = series(DAY_VALUES, 1_000_000, 1);
  const month = series(Math.floor((MONTH_DAYS * 86_400) / MONTH_STEP_S), MONTH_STEP_S * 1_000_000, 2);
  for (const [topicId, rows] of [
    [1, day],
    [2, day],
    [3, month],
    [4, month],
  ] as const) {
    for (let i = 0; i < rows.length; i += 2000) {
      await storage.db
        .insertInto('uns_values')
        .values(
          rows.slice(i, i + 2000).map((r) => ({
            topic_id: topicId,
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
  }
}

/** The median time of `REPEAT` runs of `work`, in ms. */
async function timed(work: () => Promise<unknown>): Promise<number> {
  const times: number[] = [];
  for (let i = 0; i < REPEAT; i++) {
    const started = performance.now();
    await work();
    times.push(performance.now() - started);
  }
  return times.sort((a, b) => a - b)[Math.floor(times.length / 2)] as number;
}

async function run(dialect: 'sqlite' | 'postgres'): Promise<void> {
  const database = await createTestDatabase(dialect);
  const storage = openStorage({ dataDir: database.dataDir, databaseUrl: database.databaseUrl });
  try {
    await migrateToLatest(storage);
    const layout = await openHistorian(storage);
    await layout.ensureDays(Array.from({ length: MONTH_DAYS + 1 }, (_, d) => DAY0 + d * DAY_US));
    await load(storage);
    const store = new SegmentStore(storage.db, dialect);
    for (const topicId of [1, 3])
      for (let d = 0; d <= MONTH_DAYS; d++) await store.compactDay(topicId, DAY0 + d * DAY_US);
    const repository = new DataRepository(storage.db);
    /** Every page of one day's history (values without their timestamps' topic: equal for 1 and 2). */
    const history = async (topicId: number, order: 'asc' | 'desc' = 'asc') => {
      let afterUs: number | null = null;
      const pages: unknown[] = [];
      for (;;) {
        const page = await repository.range({
          topicId,
          fromUs: DAY0,
          toUs: DAY0 + DAY_US,
          order,
          limit: 1000,
          afterUs,
        });
        pages.push(page.slice(0, 1000).map((r) => [Number(r.ts_us), r.value_json, r.quality, r.source]));
        if (page.length <= 1000) return pages;
        afterUs = Number(page[999]?.ts_us);
      }
    };
    const toUs = DAY0 + MONTH_DAYS * DAY_US;
    const buckets = (topicId: number) => repository.buckets(topicId, DAY0, toUs, HOUR_US);
    const cold = async (topicId: number) => {
      await storage.db.deleteFrom('uns_rollups').execute();
      await storage.db.deleteFrom('uns_rollup_coverage').execute();
      const rollups = new HistorianRollups(storage.db, dialect, async () => {});
      return rollups.buckets(
        { organizationId: 'bench', path: `t${topicId}`, id: topicId },
        DAY0,
        toUs,
        HOUR_US,
        toUs + DAY_US,
      );
    };
    // What segments answer is what rows answer, exactly (every page both ways, every bucket).
    const same = (what: string, a: unknown, b: unknown) => {
      if (JSON.stringify(a) !== JSON.stringify(b)) throw new Error(`${what}: segments and rows differ`);
    };
    const days = await history(1);
    if (days.flat().length !== DAY_VALUES) throw new Error('history count');
    same('history asc', days, await history(2));
    same('history desc', await history(1, 'desc'), await history(2, 'desc'));
    same('buckets', await buckets(3), await buckets(4));
    same('rollups', await cold(3), await cold(4));
    console.log(
      `\n[${dialect}] load ${loadavg()
        .map((l) => l.toFixed(2))
        .join(' ')}; median of ${REPEAT}`,
    );
    const line = (name: string, rowsMs: number, segmentsMs: number) =>
      console.log(
        `  ${name.padEnd(46)} rows ${rowsMs.toFixed(1)} ms, segments ${segmentsMs.toFixed(1)} ms: ${(rowsMs / segmentsMs).toFixed(2)}x (target > 1: ${rowsMs > segmentsMs ? 'meets' : 'BELOW'})`,
      );
    /** Segments read with the decode cache emptied first (every segment decoded again). */
    const uncached = (work: () => Promise<unknown>) => () => {
      segmentCache.clear();
      return work();
    };
    const reads: [string, () => Promise<unknown>, () => Promise<unknown>][] = [
      [`history of one day (${DAY_VALUES} values, pages of 1000)`, () => history(2), () => history(1)],
      [`1-hour buckets over ${MONTH_DAYS} days (aggregate)`, () => buckets(4), () => buckets(3)],
      [`1-hour buckets over ${MONTH_DAYS} days (rollups, cold)`, () => cold(4), () => cold(3)],
    ];
    for (const [name, rows, segments] of reads) {
      const rowsMs = await timed(rows);
      line(name, rowsMs, await timed(segments));
      line('  the same, decode cache emptied first', rowsMs, await timed(uncached(segments)));
    }
  } finally {
    await storage.close();
    await database.drop();
  }
}

const dialects = (process.env.BENCH_DIALECTS ?? 'sqlite,postgres').split(',') as ('sqlite' | 'postgres')[];
for (const dialect of dialects) await run(dialect);
