/**
 * Issue 38: publishing while the compaction job works, against publishing without it (baseline, same
 * run, same server): HTTP batches (10,000 records, two in flight) and MQTT QoS 0 historized (one
 * publisher, one subscriber, mqtt-clients.ts). Rounds alternate. Before each work "with", old days of
 * OLD_TOPICS x OLD_PER_DAY rows are written straight into the table (not timed) until at least half
 * a day's worth is left to compact; the job (as the server builds it: on the compaction thread, paced,
 * asking the event loop's connection first, giving disk back) compacts them in a loop for the whole
 * work, and its run in hand is ended after its day once the work is done (what is left is the next
 * round's). Live values are published with current timestamps (today: never compacted), so only the
 * old days are. Prints each round as it ends and the ratios at the end (target >= 0.95x), with the
 * load average, and the wall and CPU time of the set-up phases.
 *
 *   node --import tsx bench/historian/publish-compaction.bench.ts [sqlite|postgres]
 *   ROUNDS=1 BATCHES=2 MESSAGES=2000 OLD_TOPICS=5 OLD_PER_DAY=2000 node --import tsx bench/historian/publish-compaction.bench.ts sqlite   (tiny)
 *
 * Options (environment): ROUNDS (4), BATCHES of 10,000 records a HTTP work (60), MESSAGES a MQTT work
 * (100,000; at 20 and 30,000, a work lasted 0.3-0.8 s on a quiet machine and single rounds varied by 15%), OLD_TOPICS (200) and OLD_PER_DAY (8,640) of an old day, IDLE_MS the loop's pause after a
 * run that found nothing (20).
 */
import { loadavg } from 'node:os';
import { DAY_US } from '../../src/modules/uns/historian/historian-layout.js';
import {
  COMPACTION_PACE_WHEN_BUSY,
  CompactionJob,
} from '../../src/modules/uns/historian/segments/compaction-job.js';
import { reclaimDisk } from '../../src/modules/uns/historian/segments/disk-reclaim.js';
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
const BATCHES = Number(process.env.BATCHES ?? 60);
const MESSAGES = Number(process.env.MESSAGES ?? 100_000);
const OLD_TOPICS = Number(process.env.OLD_TOPICS ?? 200);
const OLD_PER_DAY = Number(process.env.OLD_PER_DAY ?? 8640);
const PER_BATCH = 10_000;
/** The pause of the bench's compaction loop after a run that found nothing to compact. */
const IDLE_MS = Number(process.env.IDLE_MS ?? 20);

// The job is driven here (MERIDIAN_UNS_COMPRESS=false: the server's own does not start).
const bench = await timed('server started', async () =>
  startBenchServer(dialect, { mqttPort: await freePort(), unsCompress: false }),
);
const { db } = bench.server.storage;
const job = new CompactionJob({
  db,
  // Where the server runs it: the compaction thread (SQLite file, PostgreSQL), compaction-thread.ts.
  store: bench.server.app.uns.compactor,
  clock: { now: () => Date.now() },
  settle: () => bench.server.app.uns.writer.settle(),
  compressAfterMs: 3_600_000,
  replicaId: 'bench',
  // As the server builds its own job (uns.module.ts): paced, asking first, giving disk back.
  paceWhenBusy: COMPACTION_PACE_WHEN_BUSY,
  hasRowsBefore: (beforeUs) => bench.server.app.uns.segments.hasRowsBefore(beforeUs),
  reclaim: (beforeUs) => reclaimDisk(db, dialect, beforeUs),
});
// Live values: today (never compacted), a message 1 ms after the last, from far enough back that the
// last round's stay in the past (values more than MERIDIAN_UNS_FUTURE_TOLERANCE ahead are refused, and
// the subscriber would wait for them for ever).
const mqttWorks = 2 * ROUNDS + 1;
const liveUs = Math.max(
  Math.floor((Date.now() * 1000) / DAY_US) * DAY_US,
  Date.now() * 1000 - (mqttWorks * MESSAGES + 60_000) * 1000,
);
if (liveUs + mqttWorks * MESSAGES * 1000 > Date.now() * 1000 + 60_000_000)
  console.log("  (today began too recently for every round's MQTT values to be in the past: run it later)");
const mqttUrl = `mqtt://127.0.0.1:${bench.server.app.uns.broker.status().address?.split(':').pop()}`;
let oldDay = Math.floor((Date.now() * 1000) / DAY_US) * DAY_US - 400 * DAY_US;

/** Old rows written and compacted so far: what is left to compact is their difference. */
const old = { written: 0, compacted: 0 };

/** Old days written until at least half a day's worth is left to compact. */
async function oldRows(): Promise<void> {
  while (old.written - old.compacted < (OLD_TOPICS * OLD_PER_DAY) / 2) await oldDayRows();
}

/** A complete old day of rows for the job to compact (written straight into the table, not timed). */
async function oldDayRows(): Promise<void> {
  oldDay += DAY_US;
  old.written += OLD_TOPICS * OLD_PER_DAY;
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

/** The load average, as printed with every figure. */
function load(): string {
  return loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');
}

/** Runs `step`, printing its wall time and this process's CPU time (every thread's) once it ends. */
async function timed<T>(name: string, step: () => Promise<T>): Promise<T> {
  const started = performance.now();
  const cpu = process.cpuUsage();
  const result = await step();
  const used = process.cpuUsage(cpu);
  console.log(
    `  ${name}: ${((performance.now() - started) / 1000).toFixed(1)} s, CPU ${((used.user + used.system) / 1e6).toFixed(1)} s; load ${load()}`,
  );
  return result;
}

/** Runs `work` with the job compacting in a loop meanwhile (or alone); answers its rate. */
async function withCompaction(
  compacting: boolean,
  work: () => Promise<number>,
): Promise<{ rate: number; compacted: number; runs: number; compactingMs: number }> {
  if (compacting) await timed(`old rows written (days of ${OLD_TOPICS} x ${OLD_PER_DAY})`, oldRows);
  const working = new AbortController();
  let compacted = 0;
  let runs = 0;
  let compactingMs = 0;
  const loop = (async () => {
    while (compacting && !working.signal.aborted) {
      const started = performance.now();
      const done = await job.compactCompleteDays({ signal: working.signal });
      compactingMs += performance.now() - started;
      runs++;
      compacted += done?.values ?? 0;
      if (!done || done.values === 0) await new Promise((r) => setTimeout(r, IDLE_MS));
    }
  })();
  const rate = await work();
  working.abort();
  await loop;
  old.compacted += compacted;
  return { rate, compacted, runs, compactingMs };
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
const mqttAuth = { username: bench.orgId, password: bench.token };
const mqttRate = async () =>
  (await runMqttClients(mqttUrl, mqttAuth, MESSAGES, mqttRound++, liveUs)).perSecond;

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
  await timed('warm-up', async () => {
    await httpBatches();
    await mqttRate();
    // The compaction thread started (seconds of CPU): the rounds measure compaction, not its start-up.
    await bench.server.app.uns.compactor.seriesBefore(0);
  });
  const rates = { http: [[], []] as number[][], mqtt: [[], []] as number[][] };
  let compacted = 0;
  for (let round = 0; round < ROUNDS; round++) {
    for (const on of [false, true]) {
      const h = await withCompaction(on, httpBatches);
      const m = await withCompaction(on, mqttRate);
      rates.http[on ? 1 : 0]!.push(h.rate);
      rates.mqtt[on ? 1 : 0]!.push(m.rate);
      compacted += h.compacted + m.compacted;
      const job = on
        ? `; compacted ${h.compacted} + ${m.compacted} values in ${h.runs + m.runs} runs of ${((h.compactingMs + m.compactingMs) / 1000).toFixed(1)} s`
        : '';
      console.log(
        `[${dialect}] round ${round + 1}/${ROUNDS} ${on ? 'with' : 'without'} compaction: HTTP batch ${h.rate.toFixed(0)} values/s, MQTT ${m.rate.toFixed(0)} msg/s${job}; load ${load()}`,
      );
    }
  }
  const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
  console.log(
    `\n[${dialect}] ${ROUNDS} rounds; ${compacted} old values compacted during the rounds "with"; load ${load()}`,
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
