/**
 * Issue 38: publishing while the compaction job works, against publishing without it (baseline, same
 * run, same server): HTTP batches (10,000 records, two in flight) and MQTT QoS 0 historized (one
 * publisher, one subscriber, mqtt-clients.ts). Rounds alternate; before each round "with", a complete
 * old day of OLD_TOPICS x OLD_PER_DAY rows is written (not timed) and the job compacts it, in this
 * process (on the server's compaction thread, as the server's own job), in a loop for the whole round. Live values are published with current timestamps. Prints
 * each ratio (target >= 0.95x) and the load average.
 *
 *   node --import tsx bench/historian/publish-compaction.bench.ts [sqlite|postgres]
 *   ROUNDS=1 BATCHES=2 MESSAGES=2000 OLD_TOPICS=5 OLD_PER_DAY=2000 node --import tsx bench/historian/publish-compaction.bench.ts sqlite   (tiny)
 */
import { loadavg } from 'node:os';
import { DAY_US } from '../../src/modules/uns/historian/historian-layout.js';
import {
  COMPACTION_PACE_WHEN_BUSY,
  CompactionJob,
} from '../../src/modules/uns/historian/segments/compaction-job.js';
import { plantSeries } from '../../src/modules/uns/historian/segments/plant-series.js';
import { formatRfc3339Micros } from '../../src/modules/uns/rfc3339.js';
import type { DialectName } from '../../src/storage/database.js';
import { freePort } from '../../test/helpers/free-port.js';
import { relaunchWithServerFlags } from '../server-process.js';
import { report, startBenchServer } from '../uns/bench-server.js';
import { runMqttClients } from '../uns/mqtt-clients.js';

await relaunchWithServerFlags();

const dialect = (process.argv[2] ?? 'sqlite') as DialectName;
const ROUNDS = Number(process.env.ROUNDS ?? 4);
const BATCHES = Number(process.env.BATCHES ?? 20);
const MESSAGES = Number(process.env.MESSAGES ?? 30_000);
const OLD_TOPICS = Number(process.env.OLD_TOPICS ?? 200);
const OLD_PER_DAY = Number(process.env.OLD_PER_DAY ?? 8640);
const PER_BATCH = 10_000;

// The job is driven here (MERIDIAN_UNS_COMPRESS=false: the server's own does not start).
const bench = await startBenchServer(dialect, { mqttPort: await freePort(), unsCompress: false });
const { db } = bench.server.storage;
const job = new CompactionJob({
  db,
  // Where the server runs it: the compaction thread (SQLite file, PostgreSQL), compaction-thread.ts.
  store: bench.server.app.uns.compactor,
  clock: { now: () => Date.now() },
  settle: () => bench.server.app.uns.writer.settle(),
  compressAfterMs: 3_600_000,
  replicaId: 'bench',
  // Paced as the server's own job (uns.module.ts).
  paceWhenBusy: COMPACTION_PACE_WHEN_BUSY,
});
const mqttUrl = `mqtt://127.0.0.1:${bench.server.app.uns.broker.status().address?.split(':').pop()}`;
let oldDay = Math.floor((Date.now() * 1000) / DAY_US) * DAY_US - 400 * DAY_US;

/** A complete old day of rows for the job to compact (written straight into the table, not timed). */
async function oldRows(): Promise<void> {
  oldDay += DAY_US;
  await bench.server.app.uns.layout.ensureDays([oldDay]);
  const step = Math.floor(DAY_US / OLD_PER_DAY);
  for (let topic = 0; topic < OLD_TOPICS; topic++) {
    const path = `v1/bench/old${topic}/value`;
    const row = await db
      .selectFrom('uns_topics')
      .select('id')
      .where('organization_id', '=', bench.orgId)
      .where('path', '=', path)
      .executeTakeFirst();
    if (!row) throw new Error(`topic ${path} not created`);
    const series = plantSeries('float', OLD_PER_DAY, oldDay, topic);
    for (let i = 0; i < series.length; i += 2000) {
      await db
        .insertInto('uns_values')
        .values(
          series.slice(i, i + 2000).map((r, j) => ({
            topic_id: Number(row.id),
            ts_us: oldDay + (i + j) * step,
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

/** Runs `work` with the job compacting in a loop meanwhile (or alone); answers its rate. */
async function withCompaction(
  compacting: boolean,
  work: () => Promise<number>,
): Promise<{ rate: number; compacted: number }> {
  if (compacting) await oldRows();
  let running = compacting;
  let compacted = 0;
  const loop = (async () => {
    while (running) {
      const done = await job.compactCompleteDays();
      compacted += done?.values ?? 0;
      if (!done || done.values === 0) await new Promise((r) => setTimeout(r, 20));
    }
  })();
  const rate = await work();
  running = false;
  await loop;
  return { rate, compacted };
}

let batchRound = 0;
async function httpBatches(): Promise<number> {
  const baseUs = Date.now() * 1000 - 30_000_000;
  const bodies = Array.from({ length: BATCHES }, (_, b) =>
    JSON.stringify({
      records: Array.from({ length: PER_BATCH }, (_, i) => ({
        topic: `v1/bench/line${i % 100}/value`,
        value: i,
        timestamp: formatRfc3339Micros(baseUs + (batchRound * BATCHES * PER_BATCH + b * PER_BATCH + i)),
      })),
    }),
  );
  batchRound++;
  const headers = {
    authorization: `Bearer ${bench.token}`,
    'x-organization-id': bench.orgId,
    'content-type': 'application/json',
  };
  const url = `${bench.server.url}/api/v1/uns/data/publish/batch`;
  const started = performance.now();
  let next = 0;
  const worker = async () => {
    while (next < bodies.length) {
      const res = await fetch(url, { method: 'POST', headers, body: bodies[next++]! });
      if (res.status !== 200) throw new Error(`batch answered ${res.status}: ${await res.text()}`);
    }
  };
  await Promise.all([worker(), worker()]);
  return (BATCHES * PER_BATCH) / ((performance.now() - started) / 1000);
}

let mqttRound = 0;
const mqttRate = async () =>
  (await runMqttClients(mqttUrl, { username: bench.orgId, password: bench.token }, MESSAGES, mqttRound++))
    .perSecond;

try {
  // The old topics, made by one publish each (their old days are written straight into the table).
  const made = await fetch(`${bench.server.url}/api/v1/uns/data/publish/batch`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${bench.token}`,
      'x-organization-id': bench.orgId,
      'content-type': 'application/json',
    },
    body: JSON.stringify({
      records: Array.from({ length: OLD_TOPICS }, (_, t) => ({ topic: `v1/bench/old${t}/value`, value: 0 })),
    }),
  });
  if (made.status !== 200) throw new Error(`old topics: ${made.status} ${await made.text()}`);
  await httpBatches(); // warm-up
  await mqttRate();
  const rates = { http: [[], []] as number[][], mqtt: [[], []] as number[][] };
  let compacted = 0;
  for (let round = 0; round < ROUNDS; round++) {
    for (const on of [false, true]) {
      const h = await withCompaction(on, httpBatches);
      const m = await withCompaction(on, mqttRate);
      rates.http[on ? 1 : 0]!.push(h.rate);
      rates.mqtt[on ? 1 : 0]!.push(m.rate);
      compacted += h.compacted + m.compacted;
    }
  }
  const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
  console.log(
    `\n[${dialect}] ${ROUNDS} rounds; ${compacted} old values compacted during the rounds "with"; load ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
  );
  report(
    '  HTTP batch values/s, compaction running vs not',
    mean(rates.http[1]!),
    mean(rates.http[0]!),
    'values/s',
    0.95,
  );
  report(
    '  MQTT QoS 0 historized/s, compaction running vs not',
    mean(rates.mqtt[1]!),
    mean(rates.mqtt[0]!),
    'msg/s',
    0.95,
  );
} finally {
  await job.lease.release();
  await bench.close();
}
