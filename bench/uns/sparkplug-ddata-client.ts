/**
 * The publisher of sparkplug-ddata.bench.ts, in a process of its own so that its encoding does not share
 * Meridian's thread: `sparkplug` publishes an NBIRTH and a DBIRTH of `metrics` metrics (aliases 1..n),
 * then `messages` DDATA of every metric by alias, encoded by Eclipse Tahu's codec; `json` publishes the
 * same values as plain JSON envelopes, one MQTT message a value on its own topic. All at QoS 0. Prints
 * `connected <epoch ms>` before the first publish and `sent <n>` when every packet is written to the socket.
 *   node --import tsx bench/uns/sparkplug-ddata-client.ts '<json options>'
 */
import mqtt from 'mqtt';
import { encodePayload, type UMetric } from 'sparkplug-payload/lib/sparkplugbpayload.js';

interface Options {
  url: string;
  username: string;
  password: string;
  mode: 'sparkplug' | 'json';
  messages: number;
  metrics: number;
  /** The first message's timestamp (epoch ms); message k is 1 ms later per k. */
  t0: number;
  /** Whether to send the births first (the first sparkplug round). */
  births: boolean;
}

const options = JSON.parse(process.argv[2]!) as Options;
const client = await mqtt.connectAsync(options.url, {
  username: options.username,
  password: options.password,
  reconnectPeriod: 0,
  clientId: `bench-${options.mode}-${process.pid}`,
});
// The round starts here (not at the process's start, which loading the code dominates).
console.log(`connected ${Date.now()}`);
const value = (k: number, i: number) => (k * 7 + i) % 1000;
let sent = 0;
const publish = (topic: string, payload: Buffer | string) =>
  new Promise<void>((resolve, reject) =>
    client.publish(topic, payload, { qos: 0 }, (error) => (error ? reject(error) : resolve())),
  );

if (options.mode === 'sparkplug') {
  const group = 'Bench';
  let seq = 0;
  const next = () => {
    const s = seq;
    seq = (seq + 1) % 256;
    return s;
  };
  if (options.births) {
    await publish(
      `spBv1.0/${group}/NBIRTH/Edge1`,
      Buffer.from(
        encodePayload({
          timestamp: options.t0 - 1,
          seq: next(),
          metrics: [{ name: 'bdSeq', type: 'Int64', value: 0 }] as UMetric[],
        }),
      ),
    );
    const metrics: UMetric[] = [];
    for (let i = 0; i < options.metrics; i++)
      metrics.push({ name: `m${i}`, alias: i + 1, type: 'Double', value: -1 } as UMetric);
    await publish(
      `spBv1.0/${group}/DBIRTH/Edge1/Dev1`,
      Buffer.from(encodePayload({ timestamp: options.t0 - 1, seq: next(), metrics })),
    );
  } else {
    seq = Number(process.env.SEQ ?? 0);
  }
  for (let k = 0; k < options.messages; k++) {
    const metrics: UMetric[] = [];
    for (let i = 0; i < options.metrics; i++)
      metrics.push({ alias: i + 1, type: 'Double', value: value(k, i) } as UMetric);
    await publish(
      `spBv1.0/${group}/DDATA/Edge1/Dev1`,
      Buffer.from(encodePayload({ timestamp: options.t0 + k, seq: next(), metrics })),
    );
    sent += options.metrics;
  }
  console.log(`seq ${seq}`);
} else {
  for (let k = 0; k < options.messages; k++) {
    const timestamp = new Date(options.t0 + k).toISOString();
    // Not awaited one by one (a QoS 0 publish is written to the socket in order): the last of a message's.
    for (let i = 0; i < options.metrics - 1; i++) {
      client.publish(`v1/benchjson/Dev1/m${i}`, `{"value":${value(k, i)},"timestamp":"${timestamp}"}`, {
        qos: 0,
      });
    }
    const last = options.metrics - 1;
    await publish(`v1/benchjson/Dev1/m${last}`, `{"value":${value(k, last)},"timestamp":"${timestamp}"}`);
    sent += options.metrics;
  }
}
console.log(`sent ${sent}`);
await client.endAsync();
