import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import mqtt, { type MqttClient } from 'mqtt';
import { testDialects } from '../helpers/dialects.js';
import { addMember, buildOrganization, buildUser } from '../helpers/factories.js';
import { freePort } from '../helpers/free-port.js';
import type { TestClient } from '../helpers/http-client.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';
import { createPat, unsCounts } from './uns-helpers.js';

const PUBLISH = '/api/v1/uns/data/publish';

function connect(url: string, username: string, password: string): Promise<MqttClient> {
  return new Promise((resolve, reject) => {
    const client = mqtt.connect(url, { username, password, reconnectPeriod: 0, connectTimeout: 5000 });
    client.once('connect', () => resolve(client));
    client.once('error', (error) => {
      client.end(true);
      reject(error);
    });
  });
}

function nextMessage(client: MqttClient, topic?: string): Promise<{ topic: string; payload: string }> {
  return new Promise((resolve) => {
    const listener = (t: string, payload: Buffer) => {
      if (topic && t !== topic) return;
      client.off('message', listener);
      resolve({ topic: t, payload: payload.toString() });
    };
    client.on('message', listener);
  });
}

async function until<T>(read: () => Promise<T | null | undefined>): Promise<T> {
  for (;;) {
    const value = await read();
    if (value !== null && value !== undefined) return value;
    await new Promise((r) => setTimeout(r, 20));
  }
}

for (const dialect of testDialects()) {
  describe(`UNS MQTT, embedded broker [${dialect}]`, () => {
    let server: TestServer;
    let api: TestClient;
    let url: string;
    let token: string;
    const clients: MqttClient[] = [];
    const open = async (user: string, password: string) => {
      const client = await connect(url, user, password);
      clients.push(client);
      return client;
    };

    before(async () => {
      server = await startTestServer(dialect, { config: { mqttPort: await freePort() } });
      url = `mqtt://127.0.0.1:${server.config.mqttPort}`;
      token = await createPat(server.admin, ['uns:publish', 'uns:read']);
      api = server.client.as({ token, org: server.orgId });
    });
    after(async () => {
      for (const client of clients) client.end(true);
      await server?.close();
    });

    it('refuses a connection with a bad token or a foreign organization', async () => {
      await assert.rejects(connect(url, server.orgId, 'mrd_pat_not-a-token'));
      await assert.rejects(connect(url, '00000000-0000-4000-8000-000000000000', token));
    });

    it('historizes an MQTT publish (envelope) under the HTTP contract', async () => {
      const client = await open(server.orgId, token);
      client.publish(
        'v1/mqtt/in/a',
        JSON.stringify({ value: 42, quality: 1, source: 'dev-1', timestamp: '2026-01-01T00:00:00Z' }),
        {
          qos: 1,
        },
      );
      const value = await until(
        async () => (await api.get('/api/v1/uns/data/latest?topic=v1/mqtt/in/a')).body.data ?? null,
      );
      assert.deepEqual(
        { value: value.value, quality: value.quality, source: value.source, timestamp: value.timestamp },
        { value: 42, quality: 1, source: 'dev-1', timestamp: '2026-01-01T00:00:00.000000Z' },
      );
    });

    it('historizes a bare JSON value and relays it to subscribers of the organization', async () => {
      const publisher = await open(server.orgId, token);
      const subscriber = await open(server.orgId, token);
      await subscriber.subscribeAsync('v1/mqtt/relay/#');
      const received = nextMessage(subscriber);
      await publisher.publishAsync('v1/mqtt/relay/x', '"running"', { qos: 1 });
      assert.deepEqual(await received, { topic: 'v1/mqtt/relay/x', payload: '"running"' });
      assert.equal(
        (await api.get('/api/v1/uns/data/latest?topic=v1/mqtt/relay/x')).body.data.value,
        'running',
      );
    });

    it('delivers every HTTP publish to the MQTT subscribers of the organization', async () => {
      const subscriber = await open(server.orgId, token);
      await subscriber.subscribeAsync('v1/http/+/temp');
      const received = nextMessage(subscriber);
      const res = await api.post(PUBLISH, {
        topic: 'v1/http/l1/temp',
        value: 21.5,
        timestamp: '2026-01-01T00:00:00Z',
      });
      assert.equal(res.status, 200);
      const message = await received;
      assert.equal(message.topic, 'v1/http/l1/temp');
      assert.deepEqual(JSON.parse(message.payload), {
        value: 21.5,
        timestamp: '2026-01-01T00:00:00.000000Z',
        quality: 0,
      });
    });

    it('isolates organizations: another organization subscribed to # sees nothing, and cannot read these topics', async () => {
      const otherOrg = await buildOrganization(server);
      const user = await buildUser(server);
      await addMember(server, otherOrg, user.id, 'Editor');
      const session = await server.client.login(user.email, user.password, otherOrg);
      const otherToken = await createPat(session, ['uns:publish', 'uns:read']);
      const spy = await open(otherOrg, otherToken);
      const seen: string[] = [];
      spy.on('message', (topic) => seen.push(topic));
      await spy.subscribeAsync('#');
      // A marker published in the other organization after ours proves delivery has happened by then.
      const own = await open(otherOrg, otherToken);
      const marker = nextMessage(spy, 'v1/marker/a');
      await api.post(PUBLISH, { topic: 'v1/secret/a/b', value: 1 });
      const mine = await open(server.orgId, token);
      await mine.publishAsync('v1/secret/a/c', '2', { qos: 1 });
      await own.publishAsync('v1/marker/a', '1', { qos: 1 });
      await marker;
      // Its own organization's Sparkplug primary host STATE, retained in its own namespace, is its own
      // (test/uns/sparkplug-state.test.ts shows with distinct host ids that no other organization's is seen).
      assert.deepEqual(
        seen.filter((topic) => topic !== 'spBv1.0/STATE/meridian'),
        ['v1/marker/a'],
      );
      assert.equal(
        (await server.client.as({ token: otherToken, org: otherOrg }).get('/api/v1/uns/topics/v1/secret/a/b'))
          .status,
        404,
      );
    });

    it('disconnects a client publishing an invalid value, stores nothing, and keeps other clients', async () => {
      const bystander = await open(server.orgId, token);
      const bad = await open(server.orgId, token);
      const before = await unsCounts(server);
      const closed = new Promise<void>((resolve) => bad.once('close', () => resolve()));
      bad.publish('v1/bad/mqtt/a', 'null', { qos: 1 });
      await closed;
      assert.deepEqual(await unsCounts(server), before);
      assert.equal(bystander.connected, true);
      await bystander.publishAsync('v1/bad/mqtt/b', '1', { qos: 1 });
      assert.equal((await api.get('/api/v1/uns/data/latest?topic=v1/bad/mqtt/b')).body.data.value, 1);
    });

    it('refuses publishing without uns:publish and subscribing without uns:read', async () => {
      const readOnly = await createPat(server.admin, ['uns:read']);
      const reader = await open(server.orgId, readOnly);
      const closed = new Promise<void>((resolve) => reader.once('close', () => resolve()));
      reader.publish('v1/denied/a/b', '1', { qos: 1 });
      await closed;
      assert.equal((await api.get('/api/v1/uns/topics/v1/denied/a/b')).status, 404);
      const writeOnly = await createPat(server.admin, ['uns:publish']);
      const writer = await open(server.orgId, writeOnly);
      // SUBACK carries the failure return code 0x80, which mqtt.js reports as an error.
      await assert.rejects(writer.subscribeAsync('v1/#'), /Subscribe error/);
    });

    it('reports the broker status', async () => {
      const res = await api.get('/api/v1/uns/broker');
      assert.equal(res.status, 200);
      assert.equal(res.body.data.mode, 'embedded');
      assert.equal(res.body.data.state, 'listening');
      assert.ok(res.body.data.clients >= 1);
      assert.ok(res.body.data.messages.received.total >= 1);
    });

    it('changes the broker through the settings without a restart; a taken port is refused naming the setting', async () => {
      const notAdmin = await api.get('/api/v1/system/uns/settings');
      assert.equal(notAdmin.status, 403);
      const admin = server.admin;
      const blocked = await admin.put('/api/v1/system/uns/settings', {
        broker: { mode: 'embedded', mqttPort: server.config.mqttPort },
      });
      // Re-applying the same port restarts the broker on it.
      assert.equal(blocked.status, 200, blocked.text);
      const port = await freePort();
      const res = await admin.put('/api/v1/system/uns/settings', {
        broker: { mode: 'embedded', mqttPort: port },
        retentionDays: 30,
      });
      assert.equal(res.status, 200, res.text);
      assert.equal(res.body.data.broker.mqttPort, port);
      assert.equal(res.body.data.retentionDays, 30);
      assert.equal(res.body.data.storage.backend, dialect);
      const client = await connect(`mqtt://127.0.0.1:${port}`, server.orgId, token);
      client.end(true);
      const { createServer } = await import('node:net');
      const squatter = createServer();
      const squatPort = await freePort();
      await new Promise<void>((r) => squatter.listen(squatPort, '127.0.0.1', () => r()));
      const refused = await admin.put('/api/v1/system/uns/settings', {
        broker: { mode: 'embedded', mqttPort: squatPort },
      });
      squatter.close();
      assert.equal(refused.status, 400);
      assert.match(refused.body.message, /MERIDIAN_MQTT_PORT/);
      const disabled = await admin.put('/api/v1/system/uns/settings', { broker: { mode: 'disabled' } });
      assert.equal(disabled.body.data.broker.mode, 'disabled');
      assert.equal((await api.get('/api/v1/uns/broker')).body.data.mode, 'disabled');
    });
  });
}

for (const dialect of testDialects()) {
  describe(`UNS MQTT, bridge to the external broker at 127.0.0.1:1883 [${dialect}]`, () => {
    let server: TestServer;
    let api: TestClient;
    let external: MqttClient;
    const namespace = `meridian-test-${randomBytes(4).toString('hex')}`;

    before(async () => {
      server = await startTestServer(dialect, {
        config: { mqttUrl: 'mqtt://127.0.0.1:1883', mqttNamespace: namespace },
      });
      const token = await createPat(server.admin, ['uns:publish', 'uns:read']);
      api = server.client.as({ token, org: server.orgId });
      external = await mqtt.connectAsync('mqtt://127.0.0.1:1883', { reconnectPeriod: 0 });
      await until(async () =>
        (await api.get('/api/v1/uns/broker')).body.data.state === 'connected' ? true : null,
      );
    });
    after(async () => {
      await external?.endAsync();
      await server?.close();
    });

    it('historizes values published on the external broker under the organization namespace', async () => {
      await external.publishAsync(
        `${namespace}/${server.orgId}/v1/bridge/in/a`,
        JSON.stringify({ value: 7 }),
        {
          qos: 1,
        },
      );
      const value = await until(
        async () => (await api.get('/api/v1/uns/data/latest?topic=v1/bridge/in/a')).body.data ?? null,
      );
      assert.equal(value.value, 7);
    });

    it('stops historizing bridged values of an organization once it is suspended, and resumes on activation', async () => {
      const orgId = await buildOrganization(server);
      const topicsOf = async () =>
        (
          await server.storage.db
            .selectFrom('uns_topics')
            .select('path')
            .where('organization_id', '=', orgId)
            .where('path', 'like', 'v1/suspend/%/x')
            .execute()
        )
          .map((row) => row.path)
          .sort();
      const publishTo = (organizationId: string, topic: string) =>
        external.publishAsync(`${namespace}/${organizationId}/${topic}`, JSON.stringify({ value: 1 }), {
          qos: 1,
        });
      const latest = (topic: string) => async () =>
        (await api.get(`/api/v1/uns/data/latest?topic=${topic}`)).body.data ?? null;

      await publishTo(orgId, 'v1/suspend/before/x');
      await until(async () => ((await topicsOf()).length === 1 ? true : null));
      assert.equal((await server.admin.post(`/api/v1/organizations/${orgId}/suspend`, {})).status, 200);
      await publishTo(orgId, 'v1/suspend/during/x');
      // A value of an active organization after it on the same connection: once it is stored, the
      // suspended organization's value has been looked at too.
      await publishTo(server.orgId, 'v1/suspend/marker/x');
      await until(latest('v1/suspend/marker/x'));
      await new Promise((r) => setTimeout(r, 200));
      assert.deepEqual(await topicsOf(), ['v1/suspend/before/x'], 'nothing stored while suspended');
      assert.equal((await server.admin.post(`/api/v1/organizations/${orgId}/activate`, {})).status, 200);
      await publishTo(orgId, 'v1/suspend/after/x');
      await until(async () => ((await topicsOf()).length === 2 ? true : null));
      assert.deepEqual(await topicsOf(), ['v1/suspend/after/x', 'v1/suspend/before/x']);
    });

    it('publishes HTTP values to the external broker under the organization namespace', async () => {
      await external.subscribeAsync(`${namespace}/${server.orgId}/v1/#`);
      const received = nextMessage(external);
      await api.post(PUBLISH, { topic: 'v1/bridge/out/a', value: 3, timestamp: '2026-01-01T00:00:00Z' });
      const message = await received;
      assert.equal(message.topic, `${namespace}/${server.orgId}/v1/bridge/out/a`);
      assert.equal(JSON.parse(message.payload).value, 3);
      const status = (await api.get('/api/v1/uns/broker')).body.data;
      assert.equal(status.mode, 'external');
    });
  });
}
