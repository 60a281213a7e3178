/**
 * Issue 38: bytes on disk a value, today's rows (baseline, same run) against compressed segments after
 * compaction, on SQLite and PostgreSQL, for a plant-like mix (floats with two decimals as a random walk,
 * counters, rarely changing text states, booleans; 1 s apart). Values are written straight into
 * `uns_values` (the layout the write path produces), then compacted by the compaction job.
 *
 *   node --import tsx bench/historian/segments-disk.bench.ts            (TOPICS=40 VALUES=21600 by default)
 *   BENCH_DIALECTS=sqlite TOPICS=100 VALUES=86400 node --import tsx bench/historian/segments-disk.bench.ts
 */
import { loadavg } from 'node:os';
import { sql } from 'kysely';
import { DAY_US, openHistorian } from '../../src/modules/uns/historian/historian-layout.js';
import { CompactionJob } from '../../src/modules/uns/historian/segments/compaction-job.js';
import { type PlantSeriesKind, plantSeries } from '../../src/modules/uns/historian/segments/plant-series.js';
import { SegmentStore } from '../../src/modules/uns/historian/segments/segment-store.js';
import { openStorage, type Storage } from '../../src/storage/database.js';
import { migrateToLatest } from '../../src/storage/migrator.js';
import { createTestDatabase } from '../../test/helpers/dialects.js';

const TOPICS = Number(process.env.TOPICS ?? 40);
const VALUES = Number(process.env.VALUES ?? 21_600);
const KINDS: PlantSeriesKind[] = ['float', 'counter', 'state', 'boolean'];
const DAY0 = Date.UTC(2026, 0, 5) * 1000;

async function diskBytes(storage: Storage): Promise<{ rows: number; segments: number }> {
  if (storage.dialect === 'sqlite') {
    await sql`pragma historian.wal_checkpoint(TRUNCATE)`.execute(storage.db);
    // Pages in use (free pages are reused by later writes; the file shrinks only with a VACUUM).
    const stat = async (table: string) =>
      Number(
        (
          await sql<{
            n: number;
          }>`select sum(pgsize) as n from dbstat('historian') where name = ${table} or name like ${`sqlite_autoindex_${table}%`}`.execute(
            storage.db,
          )
        ).rows[0]?.n ?? 0,
      );
    return { rows: await stat('uns_values'), segments: await stat('uns_segments') };
  }
  await sql`vacuum full`.execute(storage.db);
  const rows = await sql<{ n: string }>`
    select coalesce(sum(pg_total_relation_size(c.oid)), 0) as n from pg_inherits i join pg_class c on c.oid = i.inhrelid
    join pg_class p on p.oid = i.inhparent where p.relname = 'uns_values'`.execute(storage.db);
  const segments = await sql<{ n: string }>`select pg_total_relation_size('uns_segments') as n`.execute(
    storage.db,
  );
  return { rows: Number(rows.rows[0]?.n ?? 0), segments: Number(segments.rows[0]?.n ?? 0) };
}

async function run(dialect: 'sqlite' | 'postgres'): Promise<void> {
  const database = await createTestDatabase(dialect);
  const storage = openStorage({ dataDir: database.dataDir, databaseUrl: database.databaseUrl });
  try {
    await migrateToLatest(storage);
    const layout = await openHistorian(storage);
    await layout.ensureDays([DAY0, DAY0 + DAY_US]);
    for (let topicId = 1; topicId <= TOPICS; topicId++) {
      const kind = KINDS[topicId % KINDS.length] as PlantSeriesKind;
      const series = plantSeries(kind, VALUES, DAY0, topicId);
      for (let i = 0; i < series.length; i += 2000) {
        await storage.db
          .insertInto('uns_values')
          .values(
            series.slice(i, i + 2000).map((r) => ({
              topic_id: topicId,
              ts_us: r.tsUs,
              value_json: r.valueJson,
              value_num: kind === 'float' || kind === 'counter' ? Number(r.valueJson) : null,
              quality: r.quality,
              source: r.source,
              received_us: r.receivedUs,
            })),
          )
          .execute();
      }
    }
    const values = TOPICS * VALUES;
    const before = await diskBytes(storage);
    const store = new SegmentStore(storage.db, dialect);
    const started = performance.now();
    const figures = await new CompactionJob({
      db: storage.db,
      store,
      clock: { now: () => DAY0 / 1000 + 3 * 86_400_000 },
      settle: async () => {},
      compressAfterMs: 3_600_000,
    }).compactCompleteDays();
    const compactMs = performance.now() - started;
    const after = await diskBytes(storage);
    const rowsBefore = before.rows / values;
    const segmentsAfter = (after.rows + after.segments) / values;
    console.log(
      `\n[${dialect}] ${values} values (${TOPICS} topics x ${VALUES}, 1 s apart), load ${loadavg()[0]?.toFixed(2)}`,
    );
    console.log(`  today (rows, baseline):     ${rowsBefore.toFixed(2)} bytes a value on disk`);
    console.log(
      `  after compact (segments):   ${segmentsAfter.toFixed(2)} bytes a value on disk (${(rowsBefore / segmentsAfter).toFixed(1)}x smaller)`,
    );
    console.log(
      `  segment data alone:         ${((figures?.segmentBytes ?? 0) / values).toFixed(2)} bytes a value; compaction ${(compactMs / 1000).toFixed(1)} s`,
    );
    const perKind = await storage.db
      .selectFrom('uns_segments')
      .select(['topic_id', 'value_count', (eb) => eb.fn('length', [eb.ref('data')]).as('bytes')])
      .execute();
    for (const [k, kind] of KINDS.entries()) {
      const mine = perKind.filter((s) => Number(s.topic_id) % KINDS.length === k);
      const bytes = mine.reduce((sum, s) => sum + Number(s.bytes), 0);
      const count = mine.reduce((sum, s) => sum + Number(s.value_count), 0);
      console.log(`    ${kind.padEnd(8)} ${(bytes / count).toFixed(2)} bytes a value (segment data)`);
    }
  } finally {
    await storage.close();
    await database.drop();
  }
}

const dialects = (process.env.BENCH_DIALECTS ?? 'sqlite,postgres').split(',') as ('sqlite' | 'postgres')[];
for (const dialect of dialects) await run(dialect);
