import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import mqtt from 'mqtt';
import { buildApp } from '../../src/app.js';
import { openStorage, type Storage } from '../../src/storage/database.js';
import { skipOutsideCi } from '../helpers/ci.js';
import { testDialects } from '../helpers/dialects.js';
import { freePort } from '../helpers/free-port.js';
import { TestClient } from '../helpers/http-client.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';
import { isValue, openSse, type SseStream } from './sse-client.js';
import { createPat } from './uns-helpers.js';

/** The Mosquitto every replica test shares (never stopped by a test). */
const MQTT_URL = process.env.MERIDIAN_TEST_MQTT_URL ?? 'mqtt://127.0.0.1:1883';
const STREAM = '/api/v1/uns/data/stream?filter=v1/rep/%23';

/**
 * Two replicas in this process on one PostgreSQL database and the external Mosquitto (bridge mode), as
 * behind a load balancer: a value committed on either, over HTTP or by a device on the broker, reaches
 * the live streams of both, each exactly once.
 */
describe('UNS live values across replicas, bridge mode [postgres]', {
  skip: testDialects().includes('postgres')
    ? false
    : skipOutsideCi('PostgreSQL is not among MERIDIAN_TEST_DIALECTS'),
}, () => {
  let a: TestServer;
  let appB: FastifyInstance;
  let storageB: Storage;
  let token: string;
  let onA: TestClient;
  let onB: TestClient;
  let streamA: SseStream;
  let streamB: SseStream;
  const namespace = `meridian-live-${randomBytes(4).toString('hex')}`;

  before(async () => {
    a = await startTestServer('postgres', { config: { mqttUrl: MQTT_URL, mqttNamespace: namespace } });
    const portB = await freePort();
    // Same database, data directory (key file), issuer and broker namespace; another port.
    storageB = openStorage({ databaseUrl: a.config.databaseUrl, dataDir: a.config.dataDir, poolSize: 5 });
    appB = await buildApp({ config: { ...a.config, httpPort: portB }, storage: storageB });
    await appB.listen({ host: '127.0.0.1', port: portB });
    token = await createPat(a.admin, ['uns:read', 'uns:publish']);
    onA = a.client.as({ token, org: a.orgId });
    onB = new TestClient(`http://127.0.0.1:${portB}`, { token, org: a.orgId });
    const status = await onB.get('/api/v1/uns/broker');
    assert.equal(status.body.data.mode, 'external', JSON.stringify(status.body));
    streamA = await openSse(`${onA.baseUrl}${STREAM}`, { token, org: a.orgId });
    streamB = await openSse(`${onB.baseUrl}${STREAM}`, { token, org: a.orgId });
    assert.equal(streamA.status, 200);
    assert.equal(streamB.status, 200);
  });
  after(async () => {
    streamA?.close();
    streamB?.close();
    await appB?.close();
    await storageB?.close();
    await a?.close();
  });

  const publish = async (on: TestClient, topic: string, value: unknown) => {
    const res = await on.post('/api/v1/uns/data/publish', { topic, value });
    assert.equal(res.status, 200, res.text);
  };
  /** Waits for `end` (published after `topic`) on both streams, then counts `topic`'s values on each. */
  // Waits for both values: with a shared subscription, two messages of one device may be committed by
  // different replicas, so `end` can reach a stream before `topic` does.
  const countOnBoth = async (topic: string, end: string) => {
    for (const stream of [streamA, streamB]) {
      await stream.next(isValue(topic), `${topic} on both replicas`);
      await stream.next(isValue(end), `${end} on both replicas`);
    }
    return [streamA, streamB].map((stream) => stream.values().filter((v) => v.topic === topic).length);
  };

  it('delivers a value published over HTTP on replica A to the streams of both, once each', async () => {
    await publish(onA, 'v1/rep/from-a', 1);
    await publish(onA, 'v1/rep/end-1', 0);
    assert.deepEqual(await countOnBoth('v1/rep/from-a', 'v1/rep/end-1'), [1, 1]);
  });

  it('delivers a value published on replica B to its own stream once, not twice', async () => {
    await publish(onB, 'v1/rep/from-b', 2);
    await publish(onB, 'v1/rep/end-2', 0);
    assert.deepEqual(await countOnBoth('v1/rep/from-b', 'v1/rep/end-2'), [1, 1]);
  });

  it('delivers every record of a batch committed on the other replica', async () => {
    const records = ['x', 'y', 'z'].map((name, i) => ({ topic: `v1/rep/batch/${name}`, value: i }));
    const res = await onA.post('/api/v1/uns/data/publish/batch', { records });
    assert.equal(res.status, 200, res.text);
    await streamB.next(isValue('v1/rep/batch/z'), 'the last record on replica B');
    assert.deepEqual(
      streamB
        .values()
        .filter((v) => String(v.topic).startsWith('v1/rep/batch/'))
        .map((v) => v.value),
      [0, 1, 2],
    );
  });

  it('delivers a value a device publishes on the external broker once committed, once to each stream', async () => {
    const device = await mqtt.connectAsync(MQTT_URL, { protocolVersion: 5, reconnectPeriod: 0 });
    try {
      const at = `${namespace}/${a.orgId}/`;
      await device.publishAsync(`${at}v1/rep/device`, JSON.stringify({ value: 3, source: 'device-9' }), {
        qos: 1,
      });
      await device.publishAsync(`${at}v1/rep/end-3`, '0', { qos: 1 });
      assert.deepEqual(await countOnBoth('v1/rep/device', 'v1/rep/end-3'), [1, 1]);
      const latest = await onB.get('/api/v1/uns/data/latest?topic=v1/rep/device');
      assert.deepEqual(
        streamB.values().find((v) => v.topic === 'v1/rep/device'),
        latest.body.data,
        'the stream sent the committed value',
      );
    } finally {
      await device.endAsync();
    }
  });
});
