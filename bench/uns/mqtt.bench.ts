/**
 * MQTT QoS 0 publishes historized per second by Meridian's embedded broker, against aedes alone
 * relaying the same messages to one subscriber, in the same run. Meridian relays a message only after
 * its value is committed, so the subscriber's count is also the committed count; the stored row count
 * is checked afterwards (no value lost).
 *   node --import tsx bench/uns/mqtt.bench.ts [sqlite|postgres] [messages]
 */
import { createServer } from 'node:net';
import { Aedes } from 'aedes';
import mqtt from 'mqtt';
import { formatRfc3339Micros } from '../../src/modules/uns/rfc3339.js';
import type { DialectName } from '../../src/storage/database.js';
import { freePort } from '../../test/helpers/free-port.js';
import { report, startBenchServer } from './bench-server.js';

const dialect = (process.argv[2] ?? 'sqlite') as DialectName;
const messages = Number(process.argv[3] ?? 50_000);
const BASE_US = Date.UTC(2026, 0, 1) * 1000;

const payloads = Array.from({ length: messages }, (_, n) => ({
  topic: `v1/bench/line${n % 100}/value`,
  payload: JSON.stringify({ value: n, timestamp: formatRfc3339Micros(BASE_US + n * 1000) }),
}));

/** Publishes every message at QoS 0 and resolves with messages/s once the subscriber has them all. */
async function relay(
  url: string,
  auth: { username?: string; password?: string },
  settled: () => Promise<void> = async () => {},
): Promise<number> {
  const subscriber = await mqtt.connectAsync(url, { ...auth, reconnectPeriod: 0 });
  const publisher = await mqtt.connectAsync(url, { ...auth, reconnectPeriod: 0 });
  await subscriber.subscribeAsync('v1/#', { qos: 0 });
  let received = 0;
  const done = new Promise<void>((resolve) => {
    subscriber.on('message', () => {
      received++;
      if (received === messages) resolve();
    });
  });
  const started = performance.now();
  for (let i = 0; i < payloads.length; i++) {
    const { topic, payload } = payloads[i]!;
    publisher.publish(topic, payload, { qos: 0 });
    // Let the socket drain now and then so that the client does not buffer everything in memory.
    if (i % 1000 === 999) await new Promise((r) => setImmediate(r));
  }
  await done;
  await settled();
  const rate = messages / ((performance.now() - started) / 1000);
  await Promise.all([subscriber.endAsync(), publisher.endAsync()]);
  return rate;
}

async function aedesAlone(): Promise<number> {
  const broker = await Aedes.createBroker();
  const server = createServer(broker.handle);
  const port = await freePort();
  await new Promise<void>((r) => server.listen(port, '127.0.0.1', () => r()));
  try {
    return await relay(`mqtt://127.0.0.1:${port}`, {});
  } finally {
    await new Promise<void>((r) => broker.close(() => r()));
    await new Promise<void>((r) => server.close(() => r()));
  }
}

async function meridian(): Promise<{ rate: number; stored: number }> {
  const bench = await startBenchServer(dialect, { mqttPort: await freePort() });
  try {
    const rate = await relay(
      `mqtt://127.0.0.1:${bench.server.app.uns.broker.status().address?.split(':').pop()}`,
      {
        username: bench.orgId,
        password: bench.token,
      },
      () => bench.server.app.uns.committer.drain(),
    );
    const stored = await bench.server.storage.db
      .selectFrom('uns_values')
      .select((eb) => eb.fn.countAll().as('n'))
      .executeTakeFirst();
    const stats = bench.server.app.uns.committer.stats;
    console.log(`  group commit: ${stats.transactions} transactions for ${stats.records} values`);
    return { rate, stored: Number(stored?.n ?? 0) };
  } finally {
    await bench.close();
  }
}

const baseline = await aedesAlone();
const measured = await meridian();
console.log(`MQTT QoS 0 [${dialect}], ${messages} messages, one publisher, one subscriber`);
console.log(
  `  stored values: ${measured.stored} of ${messages} (${measured.stored === messages ? 'none lost' : 'LOST VALUES'})`,
);
report('  historized/s', measured.rate, baseline, 'msg/s', 0.8);
