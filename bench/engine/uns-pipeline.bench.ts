/**
 * A UNS-triggered pipeline (MQTT publish into Meridian's broker → `trigger.uns` → JSONata transform →
 * `uns.publish` → MQTT subscriber) against the equivalent Node-RED flow (`mqtt in` → `change` with the
 * same JSONata → `mqtt out`, through the machine's Mosquitto), in one run: messages per second end to end
 * (from the first publish to the last output received) and messages lost (never received). Then the cost
 * of history detail standard and full against minimal. Messages go in at QoS 1 on both sides (the
 * subscriber asks for QoS 1 too) and come out at QoS 0, as Meridian's broker delivers what a pipeline
 * publishes. Node-RED's `mqtt out` is set to match: at QoS 1, as it was at first, it paid for an
 * acknowledgement that Meridian's delivery does not, which flattered Meridian's ratio. Each side gets a
 * warm-up round
 * as long as a measured one (WARMUP=n to change it): with 500 messages, both were still compiling. Then
 * ROUNDS (default 5) rounds, interleaved (a Node-RED round, then a Meridian round of each detail), and
 * each side's median rate is compared: one round of either side varies by a third on a shared machine.
 * Meridian (bench/engine/meridian-pipelines.ts) and Node-RED each run in a process of their own, the
 * clients in this one; each side's CPU time a message (its processes, all threads; Node-RED's side
 * includes Mosquitto) is printed too, as it is steadier than rates on a shared machine. Last, for
 * reference: the machine's Mosquitto keeps at most 1,000 QoS 1 messages queued for a client and drops the
 * rest, and the Node-RED flow loses a burst's messages there; the same flow through a Mosquitto of the
 * bench's own without that limit shows its rate when it loses none.
 *   node --import tsx bench/engine/uns-pipeline.bench.ts [sqlite|postgres] [messages]
 */
import { readdirSync, readFileSync } from 'node:fs';
import mqtt from 'mqtt';
import type { DialectName } from '../../src/storage/database.js';
import { stopAllChildren } from '../child-processes.js';
import { relaunchWithServerFlags } from '../server-process.js';
import { report } from '../uns/bench-server.js';
import { processCpuMs, readCpu } from '../uns/cpu-meter.js';
import { DETAILS, spawnMeridianPipelines } from './meridian-pipelines.js';
import { startNodeRed } from './node-red-flow.js';
import { startUnboundedMosquitto } from './unbounded-mosquitto.js';

await relaunchWithServerFlags();

const dialect = (process.argv[2] ?? 'sqlite') as DialectName;
const messages = Number(process.argv[3] ?? 2000);
const warmup = Number(process.env.WARMUP ?? messages);
const IDLE_MS = Number(process.env.IDLE_MS ?? 15_000);
const ROUNDS = Number(process.env.ROUNDS ?? 5);
const MOSQUITTO = { host: '127.0.0.1', port: 1883 };
const EXPRESSION = 'value * 1.8 + 32';

interface Run {
  perSecond: number;
  received: number;
  lost: number;
  /** CPU time the serving processes spent per message received (all their threads), in µs. */
  cpuPerMessageUs: number;
}

/** The pid of the machine's Mosquitto (the Node-RED side's broker), if /proc shows one. */
function mosquittoPid(): string | undefined {
  try {
    return readdirSync('/proc')
      .filter((name) => /^\d+$/.test(name))
      .find((pid) => {
        try {
          return readFileSync(`/proc/${pid}/comm`, 'utf8').trim() === 'mosquitto';
        } catch {
          return false;
        }
      });
  } catch {
    return undefined;
  }
}

interface Summary {
  /** Medians of the rounds. */
  perSecond: number;
  cpuPerMessageUs: number;
  /** The slowest and fastest round. */
  range: [number, number];
  /** Lost in all rounds together. */
  lost: number;
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};

function summarize(runs: Run[]): Summary {
  const rates = runs.map((run) => run.perSecond);
  return {
    perSecond: median(rates),
    cpuPerMessageUs: median(runs.map((run) => run.cpuPerMessageUs)),
    range: [Math.min(...rates), Math.max(...rates)],
    lost: runs.reduce((sum, run) => sum + run.lost, 0),
  };
}

const describe = (s: Summary) =>
  `${s.perSecond.toFixed(0)} msg/s (rounds ${s.range[0].toFixed(0)}-${s.range[1].toFixed(0)}), lost ${s.lost}`;

const cpuOf = (pids: string[]) => pids.reduce((sum, pid) => sum + processCpuMs(pid), 0);

/** Publishes `count` messages to `inTopic` and counts what arrives on `outTopic` until all or idle. */
async function measure(
  url: string,
  auth: { username?: string; password?: string },
  inTopic: string,
  outTopic: string,
  count: number,
  /** The processes that serve this side (their CPU per message is reported). */
  pids: string[],
): Promise<Run> {
  const sub = await mqtt.connectAsync(url, { ...auth, reconnectPeriod: 0 });
  const pub = await mqtt.connectAsync(url, { ...auth, reconnectPeriod: 0 });
  try {
    await sub.subscribeAsync(outTopic, { qos: 1 });
    let received = 0;
    let lastAt = 0;
    let done!: () => void;
    const all = new Promise<void>((resolve) => {
      done = resolve;
    });
    sub.on('message', (topic) => {
      if (topic !== outTopic) return;
      received++;
      lastAt = performance.now();
      if (received === count) done();
    });
    const start = performance.now();
    const cpuBefore = cpuOf(pids);
    const sends: Promise<unknown>[] = [];
    for (let i = 0; i < count; i++)
      sends.push(pub.publishAsync(inTopic, JSON.stringify({ value: i }), { qos: 1 }));
    await Promise.all(sends);
    for (;;) {
      const before = received;
      const idle = new Promise<void>((resolve) => setTimeout(resolve, IDLE_MS));
      await Promise.race([all, idle]);
      if (received === count || received === before) break;
    }
    const seconds = ((received === 0 ? performance.now() : lastAt) - start) / 1000;
    const cpuMs = cpuOf(pids) - cpuBefore;
    return {
      perSecond: received / seconds,
      received,
      lost: count - received,
      cpuPerMessageUs: received === 0 ? 0 : (cpuMs * 1000) / received,
    };
  } finally {
    await sub.endAsync();
    await pub.endAsync();
  }
}

/**
 * For reference, not the target: the same Node-RED flow through a Mosquitto that bounds no client's
 * queue, where it loses nothing (unbounded-mosquitto.ts), so its rate is that of the whole burst.
 */
async function unboundedReference(): Promise<void> {
  const broker = await startUnboundedMosquitto();
  if (!broker) {
    console.log('  (no Mosquitto binary here: the reference with an unbounded queue is left out)');
    return;
  }
  const flow = await startNodeRed('127.0.0.1', broker.port, `payload.${EXPRESSION}`);
  try {
    const url = `mqtt://127.0.0.1:${broker.port}`;
    const pids = [String(flow.pid), String(broker.pid)];
    await measure(url, {}, flow.inTopic, flow.outTopic, warmup, pids);
    const run = await measure(url, {}, flow.inTopic, flow.outTopic, messages, pids);
    console.log(
      `  reference: Node-RED through a Mosquitto with no queue limit a client (max_queued_messages 0): ${run.perSecond.toFixed(0)} msg/s, lost ${run.lost}; CPU ${run.cpuPerMessageUs.toFixed(0)} µs a message (Node-RED + that Mosquitto)`,
    );
  } finally {
    await flow.stop();
    await broker.stop();
  }
}

const meridian = await spawnMeridianPipelines(dialect, EXPRESSION);
// Node-RED evaluates against the message, whose payload is the published JSON.
const nodeRed = await startNodeRed(MOSQUITTO.host, MOSQUITTO.port, `payload.${EXPRESSION}`);
try {
  const auth = { username: meridian.username, password: meridian.password };
  const details = DETAILS;
  const topics = meridian.topics;
  const noderedUrl = `mqtt://${MOSQUITTO.host}:${MOSQUITTO.port}`;
  const mosquitto = mosquittoPid();
  const nodeRedPids = [String(nodeRed.pid), ...(mosquitto ? [mosquitto] : [])];
  const runNodeRed = (count: number) =>
    measure(noderedUrl, {}, nodeRed.inTopic, nodeRed.outTopic, count, nodeRedPids);
  const runMeridian = (detail: (typeof details)[number], count: number) =>
    measure(meridian.url, auth, topics[detail].inTopic, topics[detail].outTopic, count, [
      String(meridian.pid),
      // On PostgreSQL its processes work for Meridian too.
      ...(dialect === 'postgres' ? readCpu().postgresMs.keys() : []),
    ]);

  // Warm-up (JIT, sandbox thread, topic creation, connections); left out of the rates.
  await runNodeRed(warmup);
  for (const detail of details) await runMeridian(detail, warmup);

  // Rounds interleaved, each side's rate its median: on a shared machine one round of either side
  // varies by a third, and a ratio of two single rounds is a coin flip.
  const nodeRedRuns: Run[] = [];
  const meridianRuns: Record<(typeof details)[number], Run[]> = { minimal: [], standard: [], full: [] };
  for (let round = 0; round < ROUNDS; round++) {
    nodeRedRuns.push(await runNodeRed(messages));
    for (const detail of details) meridianRuns[detail].push(await runMeridian(detail, messages));
  }
  const nr = summarize(nodeRedRuns);
  const m = Object.fromEntries(details.map((d) => [d, summarize(meridianRuns[d])])) as Record<
    (typeof details)[number],
    Summary
  >;

  console.log(
    `UNS-triggered pipeline [${dialect}], ${messages} messages a round (in at QoS 1, out at QoS 0), MQTT in -> JSONata -> MQTT out, ${ROUNDS} rounds interleaved, medians`,
  );
  console.log(
    `  Node-RED 4 (mqtt in, change, mqtt out via Mosquitto): ${describe(nr)}; CPU ${nr.cpuPerMessageUs.toFixed(0)} µs a message (Node-RED + Mosquitto${mosquitto ? '' : ': Mosquitto not found, Node-RED alone'})`,
  );
  for (const detail of details)
    console.log(
      `  Meridian, history ${detail}: ${describe(m[detail])}; CPU ${m[detail].cpuPerMessageUs.toFixed(0)} µs a message (its process, all threads${dialect === 'postgres' ? ', and PostgreSQL' : ''})`,
    );
  if (nodeRedRuns.some((run) => run.received === 0))
    throw new Error('Node-RED delivered nothing: the baseline did not run');
  const ratios = meridianRuns.minimal.map((run, i) => run.perSecond / nodeRedRuns[i]!.perSecond);
  const rates = (runs: Run[]) => runs.map((run) => run.perSecond.toFixed(0)).join(', ');
  console.log(
    `  round by round, msg/s: Node-RED ${rates(nodeRedRuns)}; Meridian minimal ${rates(meridianRuns.minimal)}`,
  );
  console.log(`  round by round, Meridian minimal / Node-RED: ${ratios.map((r) => r.toFixed(2)).join(', ')}`);
  report('Meridian (minimal) vs Node-RED', m.minimal.perSecond, nr.perSecond, 'msg/s', 1.0);
  for (const detail of ['standard', 'full'] as const) {
    const cost = 1 - m[detail].perSecond / m.minimal.perSecond;
    console.log(`  history ${detail} costs ${(cost * 100).toFixed(0)}% of the minimal rate`);
  }
  await unboundedReference();
} finally {
  await nodeRed.stop();
  await meridian.stop();
  await stopAllChildren();
}
process.exit(0);
