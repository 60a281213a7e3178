/**
 * A UNS-triggered pipeline (MQTT publish into Meridian's broker → `trigger.uns` → JSONata transform →
 * `uns.publish` → MQTT subscriber) against the equivalent Node-RED flow (`mqtt in` → `change` with the
 * same JSONata → `mqtt out`), in one run: messages per second end to end (from the first publish to the
 * last output received), messages lost (never received) and each side's CPU time a message.
 *
 * The headline is the lossless comparison: Node-RED runs through a Mosquitto of the bench's own that
 * bounds no client's queue (unbounded-mosquitto.ts), so it loses nothing and its rate is that of the
 * whole burst, as Meridian's is. Then the cost of history detail standard and full against minimal.
 * Last, a second line labelled lossy: the same flow through the machine's Mosquitto, which keeps at most
 * 1,000 QoS 1 messages queued for a client and drops the rest of a burst (half the work, so not a result).
 *
 * Messages go in at QoS 1 on both sides (the subscriber asks for QoS 1 too) and come out at QoS 0, as
 * Meridian's broker delivers what a pipeline publishes; Node-RED's `mqtt out` is set to match. Each side
 * gets a warm-up round as long as a measured one (WARMUP=n to change it). Then ROUNDS (default 5)
 * rounds, interleaved (a Node-RED round, then a Meridian round of each detail), and each side's median
 * rate is compared: one round of either side varies by a third on a shared machine. Meridian
 * (meridian-pipelines.ts) and Node-RED each run in a process of their own, the clients in this one;
 * each side's CPU time a message (its processes, all threads: Node-RED's includes its Mosquitto,
 * Meridian's on PostgreSQL the backends of its database, not the server's background processes, which
 * serve other work on the machine too) is steadier than rates on a shared machine. The load
 * average is printed with the figures.
 *   node --import tsx bench/engine/uns-pipeline.bench.ts [sqlite|postgres] [messages]
 * `DETAILS=minimal` (a comma-separated list) runs only those history details, for a profile of one
 * (`BENCH_CPU_PROFILE`); minimal is always among them, as the headline is its ratio.
 */
import { loadavg } from 'node:os';
import type { DialectName } from '../../src/storage/database.js';
import { stopAllChildren } from '../child-processes.js';
import { relaunchWithServerFlags } from '../server-process.js';
import { report } from '../uns/bench-server.js';
import { DETAILS, type Detail, spawnMeridianPipelines } from './meridian-pipelines.js';
import { startNodeRed } from './node-red-flow.js';
import {
  backendPids,
  describe,
  measure,
  mosquittoPid,
  type Run,
  type Summary,
  summarize,
} from './pipeline-rounds.js';
import { startUnboundedMosquitto } from './unbounded-mosquitto.js';

await relaunchWithServerFlags();

const dialect = (process.argv[2] ?? 'sqlite') as DialectName;
// 10,000 a round: the steady state of both sides. Rounds of 2,000 (about a third of a second) flattered
// Meridian: Node-RED ran at 8,000-10,000 a second in them and at 12,500-14,000 in rounds of 10,000, while
// Meridian's held or fell a little (PostgreSQL, 2026-11-29).
const messages = Number(process.argv[3] ?? 10_000);
const warmup = Number(process.env.WARMUP ?? messages);
const ROUNDS = Number(process.env.ROUNDS ?? 5);
const details = DETAILS.filter(
  (d) => d === 'minimal' || !process.env.DETAILS || process.env.DETAILS.split(',').includes(d),
);
const MOSQUITTO = { host: '127.0.0.1', port: 1883 };
const EXPRESSION = 'value * 1.8 + 32';
// Node-RED evaluates against the message, whose payload is the published JSON.
const NODE_RED_EXPRESSION = `payload.${EXPRESSION}`;

const load = () =>
  loadavg()
    .map((l) => l.toFixed(2))
    .join(', ');

/**
 * The lossy second line: Node-RED through the machine's Mosquitto, which drops what a burst puts beyond
 * 1,000 queued messages for its `mqtt in`; a warm-up round and one measured.
 */
async function lossyRun(): Promise<void> {
  const flow = await startNodeRed(MOSQUITTO.host, MOSQUITTO.port, NODE_RED_EXPRESSION);
  try {
    const url = `mqtt://${MOSQUITTO.host}:${MOSQUITTO.port}`;
    const mosquitto = mosquittoPid();
    const pids = () => [String(flow.pid), ...(mosquitto ? [mosquitto] : [])];
    await measure(url, {}, flow.inTopic, flow.outTopic, warmup, pids);
    const run = await measure(url, {}, flow.inTopic, flow.outTopic, messages, pids);
    console.log(
      `  lossy, not a result: Node-RED through the machine's Mosquitto (1,000 QoS 1 messages queued a client, the rest dropped): ${run.perSecond.toFixed(0)} msg/s, lost ${run.lost} of ${messages}; CPU ${run.cpuPerMessageUs.toFixed(0)} µs a message (Node-RED${mosquitto ? ' + Mosquitto' : ''}); load ${load()}`,
    );
  } finally {
    await flow.stop();
  }
}

const broker = await startUnboundedMosquitto();
if (!broker) throw new Error('no Mosquitto binary here: the lossless baseline cannot run');
const meridian = await spawnMeridianPipelines(dialect, EXPRESSION);
const nodeRed = await startNodeRed('127.0.0.1', broker.port, NODE_RED_EXPRESSION);
try {
  const auth = { username: meridian.username, password: meridian.password };
  const topics = meridian.topics;
  const nodeRedUrl = `mqtt://127.0.0.1:${broker.port}`;
  const nodeRedPids = () => [String(nodeRed.pid), String(broker.pid)];
  const meridianPids = () => [
    String(meridian.pid),
    // On PostgreSQL the backends of its database work for Meridian too.
    ...(meridian.database ? backendPids(meridian.database) : []),
  ];
  const runNodeRed = (count: number) =>
    measure(nodeRedUrl, {}, nodeRed.inTopic, nodeRed.outTopic, count, nodeRedPids);
  const runMeridian = (detail: Detail, count: number) =>
    measure(meridian.url, auth, topics[detail].inTopic, topics[detail].outTopic, count, meridianPids);

  // Warm-up (JIT, sandbox thread, topic creation, connections); left out of the rates.
  await runNodeRed(warmup);
  for (const detail of details) await runMeridian(detail, warmup);

  // Rounds interleaved, each side's rate its median: on a shared machine one round of either side
  // varies by a third, and a ratio of two single rounds is a coin flip.
  const nodeRedRuns: Run[] = [];
  const meridianRuns: Record<Detail, Run[]> = { minimal: [], standard: [], full: [] };
  const loads: string[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    nodeRedRuns.push(await runNodeRed(messages));
    for (const detail of details) meridianRuns[detail].push(await runMeridian(detail, messages));
    loads.push(loadavg()[0]!.toFixed(1));
  }
  const nr = summarize(nodeRedRuns);
  const m = Object.fromEntries(details.map((d) => [d, summarize(meridianRuns[d])])) as Record<
    Detail,
    Summary
  >;

  console.log(
    `UNS-triggered pipeline [${dialect}], ${messages} messages a round (in at QoS 1, out at QoS 0), MQTT in -> JSONata -> MQTT out, ${ROUNDS} rounds interleaved, medians; load average ${load()} (1-minute load after each round: ${loads.join(', ')})`,
  );
  console.log(
    `  Node-RED 4, lossless (mqtt in, change, mqtt out via a Mosquitto with no queue limit a client): ${describe(nr)} (Node-RED + that Mosquitto)`,
  );
  for (const detail of details)
    console.log(
      `  Meridian, history ${detail}: ${describe(m[detail])} (its process, all threads${dialect === 'postgres' ? ", and its database's PostgreSQL backends" : ''})`,
    );
  if (nodeRedRuns.some((run) => run.received === 0))
    throw new Error('Node-RED delivered nothing: the baseline did not run');
  const ratios = meridianRuns.minimal.map((run, i) => run.perSecond / nodeRedRuns[i]!.perSecond);
  const rates = (runs: Run[]) => runs.map((run) => run.perSecond.toFixed(0)).join(', ');
  console.log(
    `  round by round, msg/s: Node-RED ${rates(nodeRedRuns)}; Meridian minimal ${rates(meridianRuns.minimal)}`,
  );
  console.log(`  round by round, Meridian minimal / Node-RED: ${ratios.map((r) => r.toFixed(2)).join(', ')}`);
  const lost = nr.lost + m.minimal.lost;
  report(
    `Meridian (minimal) vs Node-RED, both lossless (lost: Node-RED ${nr.lost}, Meridian ${m.minimal.lost}${lost > 0 ? ': NOT lossless' : ''})`,
    m.minimal.perSecond,
    nr.perSecond,
    'msg/s',
    1.0,
  );
  console.log(
    `  CPU a message: Meridian minimal ${m.minimal.cpuPerMessageUs.toFixed(0)} µs, Node-RED ${nr.cpuPerMessageUs.toFixed(0)} µs (Meridian spends ${(m.minimal.cpuPerMessageUs / nr.cpuPerMessageUs).toFixed(2)}x Node-RED's)`,
  );
  for (const detail of details.filter((d) => d !== 'minimal')) {
    const cost = 1 - m[detail].perSecond / m.minimal.perSecond;
    const cpu = m[detail].cpuPerMessageUs - m.minimal.cpuPerMessageUs;
    console.log(
      `  history ${detail} costs ${(cost * 100).toFixed(0)}% of the minimal rate, ${cpu.toFixed(0)} µs CPU a message more`,
    );
  }
  await nodeRed.stop();
  await lossyRun();
} finally {
  await nodeRed.stop();
  await meridian.stop();
  await broker.stop();
  await stopAllChildren();
}
process.exit(0);
