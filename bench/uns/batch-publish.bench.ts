/**
 * Batch publish values/s (HTTP, 10,000 records a batch, two batches in flight) against a bare insert of
 * the same rows into the same table layout in the same run: better-sqlite3 with one prepared statement
 * per row in transactions of 10,000 (WAL, synchronous FULL) on SQLite; on PostgreSQL one
 * `COPY uns_values FROM STDIN` (text format, through pg-copy-streams) per 10,000 rows into the same
 * daily-partitioned table.
 *   node --import tsx bench/uns/batch-publish.bench.ts [sqlite|postgres] [batches]
 */
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import SQLite from 'better-sqlite3';
import pg from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import { DAY_US, partitionName } from '../../src/modules/uns/historian/historian-layout.js';
import { formatRfc3339Micros } from '../../src/modules/uns/rfc3339.js';
import type { DialectName } from '../../src/storage/database.js';
import { createTestDatabase } from '../../test/helpers/dialects.js';
import { relaunchWithServerFlags } from '../server-process.js';
import { report, startBenchServer } from './bench-server.js';
import { type CpuUse, cpuSince, readCpu } from './cpu-meter.js';

// Meridian runs in this process: as `npm start` runs it.
await relaunchWithServerFlags();

const dialect = (process.argv[2] ?? 'sqlite') as DialectName;
const batches = Number(process.argv[3] ?? 30);
const PER_BATCH = 10_000;
const TOPICS = 100;
const BASE_US = Date.UTC(2026, 0, 1) * 1000;

function rowsOf(batch: number) {
  return Array.from({ length: PER_BATCH }, (_, i) => {
    const n = batch * PER_BATCH + i;
    return { topic: n % TOPICS, tsUs: BASE_US + n * 1000, value: n };
  });
}

/** Values per second of one side, and the CPU it used (this process and PostgreSQL's). */
interface Side {
  valuesPerSecond: number;
  cpu: CpuUse;
}

async function meridian(): Promise<Side> {
  const bench = await startBenchServer(dialect, { unsCommitMaxRecords: 20_000 });
  try {
    const bodies = Array.from({ length: batches }, (_, b) =>
      JSON.stringify({
        records: rowsOf(b).map((r) => ({
          topic: `v1/bench/line${r.topic}/value`,
          value: r.value,
          timestamp: formatRfc3339Micros(r.tsUs),
        })),
      }),
    );
    const url = `${bench.server.url}/api/v1/uns/data/publish/batch`;
    const headers = {
      authorization: `Bearer ${bench.token}`,
      'x-organization-id': bench.orgId,
      'content-type': 'application/json',
    };
    const started = performance.now();
    const cpuStart = readCpu();
    let next = 0;
    const worker = async () => {
      while (next < bodies.length) {
        const body = bodies[next++]!;
        const res = await fetch(url, { method: 'POST', headers, body });
        if (res.status !== 200) throw new Error(`batch answered ${res.status}: ${await res.text()}`);
      }
    };
    await Promise.all([worker(), worker()]);
    const seconds = (performance.now() - started) / 1000;
    const cpu = cpuSince(cpuStart);
    await bench.server.app.uns.writer.settle();
    const stored = await bench.server.storage.db
      .selectFrom('uns_values')
      .select((eb) => eb.fn.countAll().as('n'))
      .executeTakeFirst();
    if (Number(stored?.n) !== batches * PER_BATCH) throw new Error(`stored ${stored?.n} values`);
    return { valuesPerSecond: (batches * PER_BATCH) / seconds, cpu };
  } finally {
    await bench.close();
  }
}

async function bareSqlite(): Promise<Side> {
  const database = await createTestDatabase('sqlite');
  const db = new SQLite(join(database.dataDir, 'bare.db'));
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = FULL');
  db.exec(`create table uns_values (topic_id bigint not null, ts_us bigint not null, value_json text not null,
    value_num real, quality smallint not null, source text, received_us bigint not null,
    primary key (topic_id, ts_us)) without rowid`);
  const insert = db.prepare('insert into uns_values values (?, ?, ?, ?, 0, null, ?)');
  const started = performance.now();
  const cpuStart = readCpu();
  for (let b = 0; b < batches; b++) {
    const rows = rowsOf(b);
    const now = Date.now() * 1000;
    db.transaction(() => {
      for (const r of rows) insert.run(r.topic + 1, r.tsUs, String(r.value), r.value, now);
    })();
  }
  const seconds = (performance.now() - started) / 1000;
  const cpu = cpuSince(cpuStart);
  db.close();
  await database.drop();
  return { valuesPerSecond: (batches * PER_BATCH) / seconds, cpu };
}

async function barePostgres(): Promise<Side> {
  const database = await createTestDatabase('postgres');
  const client = new pg.Client({ connectionString: database.databaseUrl });
  await client.connect();
  try {
    await client.query(`create table uns_values (topic_id bigint not null, ts_us bigint not null,
      value_json text not null, value_num double precision, quality smallint not null, source text,
      received_us bigint not null, primary key (topic_id, ts_us)) partition by range (ts_us)`);
    const lastUs = BASE_US + batches * PER_BATCH * 1000;
    for (let day = Math.floor(BASE_US / DAY_US); day * DAY_US <= lastUs; day++) {
      await client.query(
        `create table ${partitionName(day)} partition of uns_values for values from (${day * DAY_US}) to (${(day + 1) * DAY_US})`,
      );
    }
    const started = performance.now();
    const cpuStart = readCpu();
    for (let b = 0; b < batches; b++) {
      const rows = rowsOf(b);
      const now = Date.now() * 1000;
      const text = rows
        .map((r) => `${r.topic + 1}\t${r.tsUs}\t${r.value}\t${r.value}\t0\t\\N\t${now}\n`)
        .join('');
      await pipeline(Readable.from([text]), client.query(copyFrom('COPY uns_values FROM STDIN')));
    }
    const seconds = (performance.now() - started) / 1000;
    return { valuesPerSecond: (batches * PER_BATCH) / seconds, cpu: cpuSince(cpuStart) };
  } finally {
    await client.end();
    await database.drop();
  }
}

const baseline = dialect === 'sqlite' ? await bareSqlite() : await barePostgres();
const measured = await meridian();
console.log(`Batch publish [${dialect}], ${batches} batches of ${PER_BATCH} records over HTTP`);
console.log(
  `  baseline: ${dialect === 'sqlite' ? 'bare better-sqlite3 prepared inserts' : 'bare COPY FROM STDIN'}`,
);
report('  values/s', measured.valuesPerSecond, baseline.valuesPerSecond, 'values/s', 0.5);
const perValue = (ms: number) => ((ms * 1000) / (batches * PER_BATCH)).toFixed(2);
for (const [name, side] of [
  ['Meridian', measured],
  ['baseline', baseline],
] as const) {
  const postgres = dialect === 'postgres' ? `, PostgreSQL ${perValue(side.cpu.postgresMs)} µs` : '';
  console.log(`  CPU/value, ${name}: Node ${perValue(side.cpu.selfMs)} µs${postgres}`);
}
