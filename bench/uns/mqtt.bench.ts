/**
 * MQTT QoS 0 publishes historized per second by Meridian's embedded broker, against aedes alone
 * relaying the same messages to one subscriber, in the same run. Meridian relays a message only after
 * its value is committed, so the subscriber's count is also the committed count; the stored row count
 * is checked afterwards (no value lost). Both brokers get warm-up rounds first, left out of the rates.
 * Meridian has this process to itself, aedes one of its own
 * (aedes-alone.ts), and the publisher and the subscriber run in a third (mqtt-clients.ts).
 *   node --import tsx bench/uns/mqtt.bench.ts [sqlite|postgres] [messages]
 * With BENCH_CPU_PROFILE=<dir>, a CPU profile of Meridian's process over the measured rounds is written
 * there (bench/measured-profile.ts; read it with bench/profile-top.ts).
 */
import type { DialectName } from '../../src/storage/database.js';
import { freePort } from '../../test/helpers/free-port.js';
import { startMeasuredProfile } from '../measured-profile.js';
import { relaunchWithServerFlags } from '../server-process.js';
import { spawnAedesAlone } from './aedes-alone.js';
import { report, startBenchServer } from './bench-server.js';
import { cpuSince, processCpuMs, readCpu } from './cpu-meter.js';
import { type ClientsRun, runMqttClients } from './mqtt-clients.js';

// Meridian runs in this process: as `npm start` runs it.
await relaunchWithServerFlags();

const dialect = (process.argv[2] ?? 'sqlite') as DialectName;
const messages = Number(process.argv[3] ?? 50_000);
// Six alternating rounds: a round lasts under a second, and on a shared machine a burst of other load
// moved a two-round ratio between 0.66x and 0.99x within minutes.
const rounds = Number(process.env.ROUNDS ?? 6);
// Three warm-up rounds each: after one, Meridian's first measured round still ran 10-20% slower than
// its later ones (its code paths are still being optimized), and aedes' 5% slower.
const warmups = Number(process.env.WARMUPS ?? 3);
// Live values by default, as a plant publishes them: each round stamped a minute before it starts, a
// microsecond apart. TIMESTAMPS=backfill stamps them from 2026-01-01 on, 1 ms apart: history into hours
// the rollup job has already summed, which Meridian notes for it (uns_rollup_late) as it commits them.
const backfill = process.env.TIMESTAMPS === 'backfill';
const stamps = (): [number | undefined, number | undefined] =>
  backfill ? [undefined, undefined] : [Date.now() * 1000 - 60_000_000, 1];

// Alternating rounds against two running brokers, so that a burst of other load hits both alike.
const aedes = await spawnAedesAlone();
const bench = await startBenchServer(dialect, { mqttPort: await freePort() });
const meridianUrl = `mqtt://127.0.0.1:${bench.server.app.uns.broker.status().address?.split(':').pop()}`;
const baselineRuns: ClientsRun[] = [];
const runs: ClientsRun[] = [];
const meridianAuth = { username: bench.orgId, password: bench.token };
// CPU over Meridian's measured rounds: this process (the broker alone) and PostgreSQL's processes; over
// the baseline's, the aedes process. Each side's clients report their own.
const cpu = { selfMs: 0, postgresMs: 0, aedesMs: 0 };
const aedesPid = String(aedes.pid);
try {
  // Both warmed up first with rounds of the same size (JIT, topic creation, connections), which the
  // rates leave out: the first round against Meridian ran 34,000-40,000 msg/s, the next 44,000.
  for (let round = 0; round < warmups; round++) {
    await runMqttClients(aedes.url, {}, messages, round, ...stamps());
    await runMqttClients(meridianUrl, meridianAuth, messages, round, ...stamps());
  }
  await bench.server.app.uns.committer.drain();
  const stopProfile = await startMeasuredProfile(`mqtt-${dialect}`);
  for (let round = warmups; round < warmups + rounds; round++) {
    const aedesStart = processCpuMs(aedesPid);
    baselineRuns.push(await runMqttClients(aedes.url, {}, messages, round, ...stamps()));
    cpu.aedesMs += processCpuMs(aedesPid) - aedesStart;
    const cpuStart = readCpu();
    runs.push(await runMqttClients(meridianUrl, meridianAuth, messages, round, ...stamps()));
    await bench.server.app.uns.committer.drain();
    const used = cpuSince(cpuStart);
    cpu.selfMs += used.selfMs;
    cpu.postgresMs += used.postgresMs;
  }
  await stopProfile();
  // Staged history (SQLite) merged first, so that the count reads every committed value.
  await bench.server.app.uns.writer.settle();
  const stored = Number(
    (
      await bench.server.storage.db
        .selectFrom('uns_values')
        .select((eb) => eb.fn.countAll().as('n'))
        .executeTakeFirst()
    )?.n ?? 0,
  );
  const stats = bench.server.app.uns.committer.stats;
  const mean = (list: number[]) => list.reduce((sum, n) => sum + n, 0) / list.length;
  const rates = runs.map((run) => run.perSecond);
  const baselineRates = baselineRuns.map((run) => run.perSecond);
  const clientsMs = (list: ClientsRun[]) => list.reduce((sum, run) => sum + run.cpuMs, 0);
  // The warm-up rounds' values are stored too.
  const sent = (warmups + rounds) * messages;
  console.log(
    `MQTT QoS 0 [${dialect}], ${warmups} warm-up and ${rounds} alternating rounds of ${messages} messages, one publisher, one subscriber, ${backfill ? 'backfill (stamped from 2026-01-01)' : 'live values (stamped now)'}`,
  );
  console.log(`  group commit: ${stats.transactions} transactions for ${stats.records} values`);
  console.log(`  stored values: ${stored} of ${sent} (${stored === sent ? 'none lost' : 'LOST VALUES'})`);
  console.log(
    `  rounds (msg/s): aedes ${baselineRates.map((r) => r.toFixed(0)).join(', ')}; Meridian ${rates.map((r) => r.toFixed(0)).join(', ')}`,
  );
  const perMessage = (ms: number) => ((ms * 1000) / (rounds * messages)).toFixed(1);
  // The two cores are shared by the broker, its clients and PostgreSQL: CPU anyone spends a message
  // comes off the rate.
  console.log(
    `  CPU/message: Meridian ${perMessage(cpu.selfMs)} µs, PostgreSQL ${perMessage(cpu.postgresMs)} µs (all its processes), its clients ${perMessage(clientsMs(runs))} µs`,
  );
  console.log(
    `  CPU/message: aedes alone ${perMessage(cpu.aedesMs)} µs, its clients ${perMessage(clientsMs(baselineRuns))} µs`,
  );
  report('  historized/s', mean(rates), mean(baselineRates), 'msg/s', 0.85);
} finally {
  await bench.close();
  await aedes.stop();
}
