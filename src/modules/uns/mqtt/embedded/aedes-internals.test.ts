import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:net';
import { after, describe, it } from 'node:test';
import { setTimeout as delay } from 'node:timers/promises';
import { Aedes, type AedesOptions, type Client, type PublishPacket } from 'aedes';
import mqtt, { type MqttClient } from 'mqtt';
import { waitUntil } from '../../../../../test/helpers/wait.js';
import {
  type AedesPublish,
  BrokerPacket,
  createAedesEmitter,
  EMITTER_CONCURRENCY,
  emitToSubscriptions,
  replaceAedesPublish,
  SPLIT_TOPICS_CACHED,
  watchPersistedSubscriptions,
} from './aedes-internals.js';

/**
 * Holds what the embedded broker takes from aedes' internals (aedes-internals.ts) to the aedes installed:
 * each test fails when an upgrade of aedes, aedes-packet or mqemitter changes what it relies on.
 */

interface Running {
  broker: Aedes;
  url: string;
  clients: Map<string, Client>;
  stop(): Promise<void>;
}

async function startAedes(options: AedesOptions = {}): Promise<Running> {
  const broker = await Aedes.createBroker(options);
  const clients = new Map<string, Client>();
  broker.on('client', (client) => clients.set(client.id, client));
  const server: Server = createServer(broker.handle);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  return {
    broker,
    url: `mqtt://127.0.0.1:${port}`,
    clients,
    async stop() {
      await new Promise<void>((resolve) => broker.close(() => resolve()));
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

async function connect(url: string, clientId: string, clean = true): Promise<MqttClient> {
  const client = mqtt.connect(url, { clientId, clean, reconnectPeriod: 0 });
  await new Promise<void>((resolve, reject) => {
    client.once('connect', () => resolve());
    client.once('error', reject);
  });
  return client;
}

/** Messages a client receives, as `topic payload` lines. */
function received(client: MqttClient): string[] {
  const lines: string[] = [];
  client.on('message', (topic, payload) => lines.push(`${topic} ${payload.toString()}`));
  return lines;
}

/** aedes' emitter (its type declarations leave it out). */
const mqOf = (broker: Aedes) => (broker as unknown as { mq: ReturnType<typeof createAedesEmitter> }).mq;

const publishPacket = (topic: string, payload: string): PublishPacket => ({
  cmd: 'publish',
  topic,
  payload: Buffer.from(payload),
  qos: 0,
  retain: false,
  dup: false,
});

describe('aedes internals the embedded broker relies on', () => {
  const running: Running[] = [];
  const clients: MqttClient[] = [];
  const start = async (options?: AedesOptions) => {
    const started = await startAedes(options);
    running.push(started);
    return started;
  };
  const client = async (url: string, id: string, clean = true) => {
    const connected = await connect(url, id, clean);
    clients.push(connected);
    return connected;
  };

  after(async () => {
    await Promise.all(clients.map((c) => c.endAsync()));
    await Promise.all(running.map((r) => r.stop()));
  });

  it("makes its emitter as aedes' own default one", async () => {
    const own = await start();
    // aedes' default emitter: its concurrency, and deliveries to empty topic levels ([MQTT-4.7.1-3]).
    for (const emitter of [mqOf(own.broker), createAedesEmitter()]) {
      assert.equal((emitter as unknown as { concurrency: number }).concurrency, EMITTER_CONCURRENCY);
      const heard: string[] = [];
      emitter.on('a/+/c', (message, done) => {
        heard.push(message.topic);
        done();
      });
      await new Promise<void>((resolve) => emitter.emit({ topic: 'a//c' }, () => resolve()));
      assert.deepEqual(heard, ['a//c']);
    }
  });

  it("keeps the emitter's topic splits in qlobber's own cache, bounded, and matches from it", async () => {
    const emitter = createAedesEmitter();
    const matcher = (emitter as unknown as { _matcher: { _split_cache: Map<string, string[]> } })._matcher;
    const heard: string[] = [];
    emitter.on('org/+/temp', (message, done) => {
      heard.push(message.topic);
      done();
    });
    const emit = (topic: string) => new Promise<void>((resolve) => emitter.emit({ topic }, () => resolve()));
    await emit('org/press1/temp');
    assert.deepEqual(matcher._split_cache.get('org/press1/temp'), ['org', 'press1', 'temp']);
    await emit('org/press1/temp');
    await emit('org/press1/speed');
    assert.deepEqual(heard, ['org/press1/temp', 'org/press1/temp']);
    // The matcher reads the cached split, not the topic: a planted one decides the match.
    matcher._split_cache.set('planted', ['org', 'x', 'temp']);
    await emit('planted');
    assert.deepEqual(heard.at(-1), 'planted');
    heard.length = 2;
    for (let i = 0; i < SPLIT_TOPICS_CACHED + 10; i++) await emit(`org/m${i}/speed`);
    assert.equal(matcher._split_cache.size, SPLIT_TOPICS_CACHED);
    assert.equal(matcher._split_cache.has('org/press1/temp'), false);
    await emit('org/press1/temp');
    assert.equal(heard.length, 3);
  });

  it("numbers a packet by the broker as aedes' publish does", async () => {
    const { broker } = await start();
    const first = new BrokerPacket(publishPacket('x/y', '1'), broker);
    const second = new BrokerPacket(publishPacket('x/y', '2'), broker);
    assert.equal(first.brokerId, broker.id);
    assert.equal(first.topic, 'x/y');
    assert.equal(first.payload.toString(), '1');
    assert.equal(first.qos, 0);
    assert.equal(first.retain, false);
    assert.equal(typeof first.brokerCounter, 'number');
    assert.equal(second.brokerCounter, first.brokerCounter! + 1);
  });

  it("delivers what is emitted on the emitter handed to aedes as `mq`, in the shape aedes' publish emits", async () => {
    const emitter = createAedesEmitter();
    const started = await start({ mq: emitter });
    assert.equal(mqOf(started.broker), emitter);
    const emitted: Record<string, unknown>[] = [];
    await new Promise<void>((resolve) =>
      emitter.on(
        'plant/#',
        (message, done) => {
          emitted.push({ ...message });
          done();
        },
        () => resolve(),
      ),
    );
    const publisher = await client(started.url, 'aedes-internals-publisher');
    const subscriber = await client(started.url, 'aedes-internals-subscriber');
    const toSubscriber = received(subscriber);
    await subscriber.subscribeAsync('plant/#', { qos: 0 });
    // What aedes' own publish gives the emitter for a client's publish ...
    await publisher.publishAsync('plant/line-1', '41', { qos: 0 });
    await waitUntil('the delivery', () => toSubscriber.length >= 1 || undefined, 10_000);
    const publisherClient = started.clients.get('aedes-internals-publisher');
    assert.ok(publisherClient);
    // ... and what the embedded broker gives it for a committed one.
    await new Promise<void>((resolve) =>
      emitToSubscriptions(
        emitter,
        started.broker,
        publishPacket('plant/line-1', '42'),
        publisherClient.id,
        resolve,
      ),
    );
    await waitUntil('the delivery', () => toSubscriber.length >= 2 || undefined, 10_000);
    assert.deepEqual(toSubscriber, ['plant/line-1 41', 'plant/line-1 42']);
    assert.equal(emitted.length, 2);
    const [own, ours] = emitted as [Record<string, unknown>, Record<string, unknown>];
    assert.deepEqual(Object.keys(ours).sort(), Object.keys(own).sort());
    assert.equal(ours.clientId, own.clientId);
    assert.equal(ours.clientId, 'aedes-internals-publisher');
    assert.equal(ours.brokerId, own.brokerId);
    assert.equal(ours.brokerCounter, (own.brokerCounter as number) + 1);
  });

  it('relays a QoS 0 publish it was answered for through its publish method, at once from within the answer', async () => {
    let answering: PublishPacket | null = null;
    const relayed: { packet: PublishPacket; client: Client | null; withinAnswer: boolean }[] = [];
    const started = await start({
      authorizePublish(_client, packet, callback) {
        answering = packet;
        try {
          callback(null);
        } finally {
          answering = null;
        }
      },
    });
    let own: AedesPublish | undefined;
    const returned = replaceAedesPublish(started.broker, (aedesPublish) => {
      own = aedesPublish;
      return (packet, publishing, done) => {
        relayed.push({ packet, client: publishing, withinAnswer: packet === answering });
        aedesPublish(packet, publishing, done);
      };
    });
    assert.equal(returned, own);
    const subscriber = await client(started.url, 'aedes-internals-reader');
    const toSubscriber = received(subscriber);
    await subscriber.subscribeAsync('line/#', { qos: 0 });
    const publisher = await client(started.url, 'aedes-internals-writer');
    await publisher.publishAsync('line/speed', '7', { qos: 0 });
    await waitUntil('the delivery', () => toSubscriber.length >= 1 || undefined, 10_000);
    // aedes publishes its $SYS announcements through the same method.
    const fromClients = relayed.filter((r) => !r.packet.topic.startsWith('$SYS/'));
    assert.equal(fromClients.length, 1);
    assert.equal(
      fromClients[0]!.withinAnswer,
      true,
      'relayed from within the answer, with the packet answered for',
    );
    assert.equal(fromClients[0]!.client?.id, 'aedes-internals-writer');
    assert.equal(fromClients[0]!.packet.topic, 'line/speed');
    // The replaced method is aedes' own from then on: the subscriber got the value through it, once.
    await delay(50);
    assert.deepEqual(toSubscriber, ['line/speed 7']);
  });

  it('tells whether persistent sessions hold subscriptions, counted before their SUBSCRIBE is acknowledged', async () => {
    const started = await start();
    const nonePersisted = watchPersistedSubscriptions(started.broker);
    await waitUntil('the first count', () => nonePersisted() || undefined, 10_000);
    // A clean session's subscriptions are not kept by aedes' persistence.
    const clean = await client(started.url, 'aedes-internals-clean');
    await clean.subscribeAsync('a/#', { qos: 1 });
    assert.equal(nonePersisted(), true);
    const persistent = await client(started.url, 'aedes-internals-kept', false);
    await persistent.subscribeAsync('a/#', { qos: 1 });
    assert.equal(nonePersisted(), false, 'counted once the SUBSCRIBE is acknowledged');
    await persistent.endAsync();
    assert.equal(nonePersisted(), false, 'an offline persistent session keeps its subscriptions');
    // The same client id with a clean session drops the stored one.
    await client(started.url, 'aedes-internals-kept', true);
    await waitUntil('the session cleaned', () => nonePersisted() || undefined, 10_000);
  });

  it('writes a delivery whose topic authorizeForward gave as bytes, on the connection it exposes as `conn`', async () => {
    const conns: unknown[] = [];
    const started = await start({
      authorizeForward(forwardTo, packet) {
        conns.push(forwardTo.conn);
        return {
          ...packet,
          topic: Buffer.from(packet.topic.slice('o/org-1/'.length), 'utf8') as unknown as string,
        };
      },
    });
    const subscriber = await client(started.url, 'aedes-internals-bytes');
    const toSubscriber = received(subscriber);
    await subscriber.subscribeAsync('o/org-1/#', { qos: 0 });
    started.broker.publish(publishPacket('o/org-1/v1/ü/temp', '21.5'), () => {});
    await waitUntil('the delivery', () => toSubscriber.length >= 1 || undefined, 10_000);
    assert.deepEqual(toSubscriber, ['v1/ü/temp 21.5']);
    // batched-writes.ts corks and uncorks it; the broker's authenticate logs its remote address.
    const conn = conns[0] as { cork?: unknown; uncork?: unknown; remoteAddress?: unknown };
    assert.equal(typeof conn.cork, 'function');
    assert.equal(typeof conn.uncork, 'function');
    assert.equal(conn.remoteAddress, '127.0.0.1');
  });
});
