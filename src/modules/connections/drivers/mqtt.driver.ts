import type { MqttClient } from 'mqtt';
import { pinnedLookup } from '../../../platform/egress/egress-pinning.js';
import {
  type ConfigTarget,
  DriverError,
  type DriverSession,
  type ProtocolDriver,
  readOnlyRefusal,
  withTimeout,
} from './driver.js';
import { checkedTarget, urlTarget } from './driver-egress.js';

const topic = { type: 'string', minLength: 1, maxLength: 1024 };
const qos = { type: 'integer', enum: [0, 1, 2], default: 0 };
const MQTT_PORTS = { 'mqtt:': 1883, 'mqtts:': 8883, 'ws:': 80, 'wss:': 443 };

/** A payload as a value: JSON when it parses, otherwise the text. */
function payloadValue(payload: Buffer): unknown {
  const text = payload.toString('utf8');
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/** Whether an MQTT topic filter matches a topic (MQTT 3.1.1 §4.7). */
export function topicMatches(filter: string, name: string): boolean {
  const f = filter.split('/');
  const t = name.split('/');
  for (let i = 0; i < f.length; i++) {
    if (f[i] === '#') return true;
    if (i >= t.length) return false;
    if (f[i] !== '+' && f[i] !== t[i]) return false;
  }
  return f.length === t.length;
}

/** An external MQTT broker through mqtt.js: publish (write), subscribe, and read a retained value. */
export const mqttDriver: ProtocolDriver = {
  id: 'mqtt',
  name: 'MQTT',
  category: 'messaging',
  session: 'exclusive',
  configSchema: {
    type: 'object',
    required: ['url'],
    additionalProperties: false,
    properties: {
      url: {
        type: 'string',
        pattern: '^(mqtt|mqtts|ws|wss)://',
        maxLength: 2048,
        'x-url-credentials': true,
        description: 'A user:password@ in it is moved to username and password when saved.',
      },
      clientId: { type: 'string', maxLength: 128 },
      username: { type: 'string', maxLength: 255 },
      password: { type: 'string', maxLength: 1024, 'x-secret': true },
      protocolVersion: { type: 'integer', enum: [3, 4, 5], default: 4 },
      keepaliveSeconds: { type: 'integer', minimum: 0, maximum: 65535, default: 60 },
      timeoutMs: { type: 'integer', minimum: 100, maximum: 120000, default: 30000 },
    },
  },
  functionTypes: [
    {
      type: 'mqtt.publish',
      direction: 'write',
      description: 'Publishes a payload (objects are sent as JSON).',
      configSchema: {
        type: 'object',
        required: ['topic', 'payload'],
        additionalProperties: false,
        properties: { topic, payload: {}, qos, retain: { type: 'boolean', default: false } },
      },
    },
    {
      type: 'mqtt.read',
      direction: 'read',
      description: 'Waits for the next message on a topic (a retained one arrives at once).',
      configSchema: {
        type: 'object',
        required: ['topic'],
        additionalProperties: false,
        properties: { topic, waitMs: { type: 'integer', minimum: 10, maximum: 60000, default: 5000 } },
      },
    },
    {
      type: 'mqtt.subscribe',
      direction: 'subscribe',
      description: 'Subscribes to a topic filter; every message is a value keyed by its topic.',
      configSchema: {
        type: 'object',
        required: ['topic'],
        additionalProperties: false,
        properties: { topic, qos },
      },
    },
  ],
  targets: (config) => [urlTarget('config.url', config.url, MQTT_PORTS)],
  async connect(config, events, context) {
    const timeoutMs = (config.timeoutMs as number) ?? 30000;
    const [{ host, port }] = mqttDriver.targets(config) as [ConfigTarget];
    const target = await checkedTarget(context, host, port);
    const tcp = !String(config.url).startsWith('ws');
    // mqtt.js, loaded with the first MQTT session (listing protocols loads no driver library).
    const { default: mqtt } = await import('mqtt');
    const client: MqttClient = mqtt.connect(config.url as string, {
      // To the checked address: over TCP and TLS as the host (TLS keeps the name as SNI), over
      // WebSocket through a lookup that answers it (the Host header keeps the name).
      ...(tcp
        ? { host: target.addresses[0], hostname: target.addresses[0], servername: target.name }
        : { wsOptions: { lookup: pinnedLookup(target) } }),
      clientId: (config.clientId as string) || undefined,
      username: config.username as string | undefined,
      password: config.password as string | undefined,
      protocolVersion: ((config.protocolVersion as number) ?? 4) as 3 | 4 | 5,
      keepalive: (config.keepaliveSeconds as number) ?? 60,
      connectTimeout: timeoutMs,
      reconnectPeriod: 0,
    });
    let closing = false;
    try {
      await withTimeout(
        new Promise<void>((resolve, reject) => {
          client.once('connect', () => resolve());
          client.once('error', (error) => reject(error));
          client.once('close', () => reject(new Error('the broker closed the connection')));
        }),
        timeoutMs,
        `connecting to ${String(config.url)}`,
      );
    } catch (error) {
      closing = true;
      client.end(true);
      const code = (error as { code?: number | string }).code;
      // CONNACK return codes 4 and 5 (v3.1.1 §3.2.2.3), reason codes 134 and 135 (v5 §3.2.2.2).
      if (code === 4 || code === 5 || code === 134 || code === 135) {
        throw new DriverError('authentication', 'the broker refused the credentials');
      }
      if (error instanceof DriverError) throw error;
      throw new DriverError('transport', `cannot connect to the broker: ${(error as Error).message}`);
    }
    client.removeAllListeners('error');
    client.on('error', () => {});
    client.on('close', () => {
      if (!closing) events.onLost(new DriverError('transport', 'connection to the broker lost'));
    });

    const session: DriverSession = {
      async execute(type, cfg) {
        if (type === 'mqtt.publish') {
          if (context.readOnly) throw readOnlyRefusal(`publishing to ${String(cfg.topic)}`);
          const payload = typeof cfg.payload === 'string' ? cfg.payload : JSON.stringify(cfg.payload);
          await client.publishAsync(cfg.topic as string, payload, {
            qos: ((cfg.qos as number) ?? 0) as 0 | 1 | 2,
            retain: (cfg.retain as boolean) ?? false,
          });
          return { value: cfg.payload, quality: 0 };
        }
        if (type === 'mqtt.read') {
          const wanted = cfg.topic as string;
          let onMessage: (t: string, p: Buffer) => void = () => {};
          const next = new Promise<unknown>((resolve) => {
            onMessage = (t, p) => {
              if (topicMatches(wanted, t)) resolve(payloadValue(p));
            };
            client.on('message', onMessage);
          });
          try {
            await client.subscribeAsync(wanted, { qos: 0 });
            const value = await withTimeout(next, (cfg.waitMs as number) ?? 5000, `waiting for ${wanted}`);
            return { value, quality: 0 };
          } finally {
            client.off('message', onMessage);
            await client.unsubscribeAsync(wanted).catch(() => {});
          }
        }
        throw new DriverError('configuration', `unknown function type ${type}`);
      },
      async subscribe(type, cfg, listener) {
        if (type !== 'mqtt.subscribe') throw new DriverError('configuration', `${type} does not subscribe`);
        const filter = cfg.topic as string;
        const onMessage = (t: string, p: Buffer) => {
          if (topicMatches(filter, t)) listener(t, { value: payloadValue(p), quality: 0 });
        };
        client.on('message', onMessage);
        await client.subscribeAsync(filter, { qos: ((cfg.qos as number) ?? 0) as 0 | 1 | 2 });
        return async () => {
          client.off('message', onMessage);
          await client.unsubscribeAsync(filter).catch(() => {});
        };
      },
      async close() {
        closing = true;
        await client.endAsync(true).catch(() => {});
      },
    };
    return session;
  },
};
