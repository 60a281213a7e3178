/**
 * A UNS-triggered pipeline (MQTT publish into Meridian's broker → `trigger.uns` → JSONata transform →
 * `uns.publish` → MQTT subscriber) against the equivalent Node-RED flow (`mqtt in` → `change` with the
 * same JSONata → `mqtt out`, through the machine's Mosquitto), in one run: messages per second end to end
 * (from the first publish to the last output received) and messages lost (never received). Then the cost
 * of history detail standard and full against minimal. QoS 1 everywhere; each side gets a warm-up round.
 *   node --import tsx bench/engine/uns-pipeline.bench.ts [sqlite|postgres] [messages]
 */
import mqtt from 'mqtt';
import type { DialectName } from '../../src/storage/database.js';
import { freePort } from '../../test/helpers/free-port.js';
import { stopAllChildren } from '../child-processes.js';
import { relaunchWithServerFlags } from '../server-process.js';
import { report, startBenchServer } from '../uns/bench-server.js';
import { startNodeRed } from './node-red-flow.js';

await relaunchWithServerFlags();

const dialect = (process.argv[2] ?? 'sqlite') as DialectName;
const messages = Number(process.argv[3] ?? 2000);
const warmup = Number(process.env.WARMUP ?? Math.min(500, messages));
const IDLE_MS = Number(process.env.IDLE_MS ?? 15_000);
const MOSQUITTO = { host: '127.0.0.1', port: 1883 };

interface Run {
  perSecond: number;
  received: number;
  lost: number;
}

/** Publishes `count` messages to `inTopic` and counts what arrives on `outTopic` until all or idle. */
async function measure(
  url: string,
  auth: { username?: string; password?: string },
  inTopic: string,
  outTopic: string,
  count: number,
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
    return { perSecond: received / seconds, received, lost: count - received };
  } finally {
    await sub.endAsync();
    await pub.endAsync();
  }
}

const bench = await startBenchServer(dialect, { mqttPort: await freePort() });
const nodeRed = await startNodeRed(MOSQUITTO.host, MOSQUITTO.port, 'payload.value * 1.8 + 32');
try {
  const meridianUrl = `mqtt://127.0.0.1:${bench.server.app.uns.broker.status().address?.split(':').pop()}`;
  const auth = { username: bench.orgId, password: bench.token };
  const pipelineFor = async (detail: 'minimal' | 'standard' | 'full') => {
    const base = `v1/bench/${detail}`;
    const res = await bench.admin.post('/api/v1/engine/pipelines', {
      name: `Bench ${detail}`,
      enabled: true,
      settings: { historyDetail: detail, concurrency: { mode: 'parallel', max: 16 } },
      nodes: [
        { id: 'in', name: 'In', type: 'trigger.uns', parameters: { filter: `${base}/in` } },
        { id: 'f', name: 'F', type: 'transform.jsonata', parameters: { expression: 'value * 1.8 + 32' } },
        { id: 'out', name: 'Out', type: 'uns.publish', parameters: { topic: `${base}/out` } },
      ],
      edges: [
        { source: 'in', target: 'f' },
        { source: 'f', target: 'out' },
      ],
    });
    if (res.status !== 201) throw new Error(`pipeline: ${res.status} ${res.text}`);
    return { inTopic: `${base}/in`, outTopic: `${base}/out` };
  };
  const details = ['minimal', 'standard', 'full'] as const;
  const topics = Object.fromEntries(
    await Promise.all(details.map(async (d) => [d, await pipelineFor(d)] as const)),
  ) as Record<(typeof details)[number], { inTopic: string; outTopic: string }>;
  const noderedUrl = `mqtt://${MOSQUITTO.host}:${MOSQUITTO.port}`;
  const runNodeRed = (count: number) => measure(noderedUrl, {}, nodeRed.inTopic, nodeRed.outTopic, count);
  const runMeridian = (detail: (typeof details)[number], count: number) =>
    measure(meridianUrl, auth, topics[detail].inTopic, topics[detail].outTopic, count);

  // Warm-up (JIT, sandbox thread, topic creation, connections); left out of the rates.
  await runNodeRed(warmup);
  for (const detail of details) await runMeridian(detail, warmup);

  const nr = await runNodeRed(messages);
  const results: Partial<Record<(typeof details)[number], Run>> = {};
  for (const detail of details) results[detail] = await runMeridian(detail, messages);
  const nr2 = await runNodeRed(messages);
  const baseline = { perSecond: (nr.perSecond + nr2.perSecond) / 2, lost: nr.lost + nr2.lost };

  console.log(
    `UNS-triggered pipeline [${dialect}], ${messages} messages a round (QoS 1), MQTT in -> JSONata -> MQTT out`,
  );
  console.log(
    `  Node-RED 4 (mqtt in, change, mqtt out via Mosquitto): ${nr.perSecond.toFixed(0)} and ${nr2.perSecond.toFixed(0)} msg/s, lost ${baseline.lost}`,
  );
  for (const detail of details) {
    const r = results[detail]!;
    console.log(`  Meridian, history ${detail}: ${r.perSecond.toFixed(0)} msg/s, lost ${r.lost}`);
  }
  report('Meridian (minimal) vs Node-RED', results.minimal!.perSecond, baseline.perSecond, 'msg/s', 1.0);
  for (const detail of ['standard', 'full'] as const) {
    const cost = 1 - results[detail]!.perSecond / results.minimal!.perSecond;
    console.log(`  history ${detail} costs ${(cost * 100).toFixed(0)}% of the minimal rate`);
  }
} finally {
  await nodeRed.stop();
  await bench.close();
  await stopAllChildren();
}
process.exit(0);
