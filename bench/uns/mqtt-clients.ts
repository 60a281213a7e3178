/**
 * The MQTT benchmark's load, in a process of its own so that the broker it measures has its process to
 * itself: one publisher sends MESSAGES QoS 0 messages, one subscriber (`v1/#`) receives them; prints the
 * messages per second from the first publish to the last message received, as JSON.
 *   MQTT_URL=... MQTT_USERNAME=... MQTT_PASSWORD=... MESSAGES=... ROUND=... node --import tsx bench/uns/mqtt-clients.ts
 */
import { fileURLToPath } from 'node:url';
import { formatRfc3339Micros } from '../../src/modules/uns/rfc3339.js';
import { execTracked } from '../child-processes.js';

const BASE_US = Date.UTC(2026, 0, 1) * 1000;

/** What one run of the clients measured: messages per second, and the clients' own CPU time. */
export interface ClientsRun {
  perSecond: number;
  /** CPU time of the clients' process (publisher and subscriber) from the first publish to the last message. */
  cpuMs: number;
}

/** Runs the clients against `url`; resolves once the subscriber has every message. */
export async function runMqttClients(
  url: string,
  auth: { username?: string; password?: string },
  messages: number,
  round = 0,
  /** The first message's timestamp (epoch µs). Default 2026-01-01. */
  baseUs = BASE_US,
  /** How much later each next message is stamped (µs). Default 1 ms. */
  stepUs = 1000,
): Promise<ClientsRun> {
  const { stdout } = await execTracked(
    process.execPath,
    ['--import', 'tsx', fileURLToPath(import.meta.url)],
    {
      env: {
        ...process.env,
        MQTT_URL: url,
        MQTT_USERNAME: auth.username ?? '',
        MQTT_PASSWORD: auth.password ?? '',
        MESSAGES: String(messages),
        ROUND: String(round),
        BASE_US: String(baseUs),
        STEP_US: String(stepUs),
      },
    },
  );
  return JSON.parse(stdout.trim().split('\n').pop()!) as ClientsRun;
}

async function relay(): Promise<ClientsRun> {
  const messages = Number(process.env.MESSAGES);
  // Each round publishes values of its own (later timestamps), so that none replaces an earlier round's.
  const first = Number(process.env.ROUND ?? 0) * messages;
  const baseUs = Number(process.env.BASE_US ?? BASE_US);
  const stepUs = Number(process.env.STEP_US ?? 1000);
  const auth = {
    username: process.env.MQTT_USERNAME || undefined,
    password: process.env.MQTT_PASSWORD || undefined,
  };
  const payloads = Array.from({ length: messages }, (_, n) => ({
    topic: `v1/bench/line${n % 100}/value`,
    payload: JSON.stringify({ value: n, timestamp: formatRfc3339Micros(baseUs + (first + n) * stepUs) }),
  }));
  const url = process.env.MQTT_URL!;
  // Loaded here, in the clients' process only: a bench that imports this module for runMqttClients
  // runs the broker it measures in its own process, where mqtt.js loaded first would load mqtt-packet
  // before the broker's modules make its debug loggers no-ops (quiet-debug.ts), as `meridian serve` does.
  const { default: mqtt } = await import('mqtt');
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
  const cpuStart = process.cpuUsage();
  const started = performance.now();
  for (let i = 0; i < payloads.length; i++) {
    const { topic, payload } = payloads[i]!;
    publisher.publish(topic, payload, { qos: 0 });
    // Let the socket drain now and then so that the client does not buffer everything in memory.
    if (i % 1000 === 999) await new Promise((r) => setImmediate(r));
  }
  await done;
  const perSecond = messages / ((performance.now() - started) / 1000);
  const cpu = process.cpuUsage(cpuStart);
  await Promise.all([subscriber.endAsync(), publisher.endAsync()]);
  return { perSecond, cpuMs: (cpu.user + cpu.system) / 1000 };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  process.stdout.write(`${JSON.stringify(await relay())}\n`);
}
