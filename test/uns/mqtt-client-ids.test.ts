import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import mqtt, { type IClientOptions, type MqttClient } from 'mqtt';
import { testDialects } from '../helpers/dialects.js';
import { addMember, buildOrganization, buildUser } from '../helpers/factories.js';
import { freePort } from '../helpers/free-port.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';
import { createPat } from './uns-helpers.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function waitFor(check: () => boolean, what: string, ms = 3000) {
  const until = Date.now() + ms;
  while (!check()) {
    if (Date.now() > until) assert.fail(`${what}: not within ${ms} ms`);
    await sleep(20);
  }
}

for (const dialect of testDialects()) {
  describe(`UNS MQTT: client ids and persistent sessions [${dialect}]`, () => {
    let server: TestServer;
    let url: string;
    let token: string;
    const clients: MqttClient[] = [];

    const connect = async (username: string, password: string, options: IClientOptions = {}) => {
      const client = await mqtt.connectAsync(url, {
        username,
        password,
        reconnectPeriod: 0,
        connectTimeout: 5000,
        ...options,
      });
      client.on('error', () => {});
      clients.push(client);
      return client;
    };
    /**
     * A persistent session (`clientId`) subscribed at QoS 1 to `<base>/#` and gone, and a QoS 1 publish to
     * `<base>/away` made meanwhile by another client.
     */
    const publishedWhileAway = async (clientId: string, base: string) => {
      const options = { clientId, clean: false, protocolVersion: 4 as const };
      const device = await connect(server.orgId, token, options);
      await device.subscribeAsync(`${base}/#`, { qos: 1 });
      await device.endAsync();
      const publisher = await connect(server.orgId, token);
      await publisher.publishAsync(`${base}/away`, '7', { qos: 1 });
      return { options, publisher };
    };
    /** Connects again with a persistent session's options, without waiting; what it receives. */
    const reconnect = (options: IClientOptions) => {
      const client = mqtt.connect(url, {
        username: server.orgId,
        password: token,
        reconnectPeriod: 0,
        ...options,
      });
      client.on('error', () => {});
      clients.push(client);
      return { client, topics: received(client) };
    };
    const received = (client: MqttClient) => {
      const topics: string[] = [];
      client.on('message', (topic) => topics.push(topic));
      return topics;
    };

    before(async () => {
      server = await startTestServer(dialect, { config: { mqttPort: await freePort() } });
      url = `mqtt://127.0.0.1:${server.config.mqttPort}`;
      token = await createPat(server.admin, ['uns:publish', 'uns:read']);
    });
    after(async () => {
      for (const client of clients) client.end(true);
      await server?.close();
    });

    it('keeps a device connected when a client of another organization uses its client id', async () => {
      const device = await connect(server.orgId, token, { clientId: 'press-4' });
      const deviceTopics = received(device);
      await device.subscribeAsync('v1/ids/#');
      let deviceClosed = false;
      device.on('close', () => {
        deviceClosed = true;
      });

      // A Viewer of another organization connects with the same client id.
      const otherOrg = await buildOrganization(server);
      const viewer = await buildUser(server);
      await addMember(server, otherOrg, viewer.id, 'Viewer');
      const viewerClient = await server.client.login(viewer.email, viewer.password, otherOrg);
      const viewerToken = await createPat(viewerClient, ['uns:read']);
      const intruder = await connect(otherOrg, viewerToken, { clientId: 'press-4' });
      assert.ok(intruder.connected);
      await sleep(300);
      assert.equal(deviceClosed, false, 'the device was not disconnected');

      const res = await server.admin.post('/api/v1/uns/data/publish', { topic: 'v1/ids/after', value: 1 });
      assert.equal(res.status, 200);
      await waitFor(() => deviceTopics.includes('v1/ids/after'), 'the device still receives');
    });

    it('still takes over a session of the same organization with the same client id', async () => {
      const first = await connect(server.orgId, token, { clientId: 'line-7' });
      let firstClosed = false;
      first.on('close', () => {
        firstClosed = true;
      });
      await connect(server.orgId, token, { clientId: 'line-7' });
      await waitFor(() => firstClosed, 'the older connection is taken over');
    });

    it('restores a persistent session once: the device receives after reconnecting', async () => {
      const options = { clientId: 'persistent-1', clean: false, protocolVersion: 4 as const };
      const first = await connect(server.orgId, token, options);
      await first.subscribeAsync('v1/persist/#', { qos: 1 });
      await first.endAsync();

      // Published while the device is away: queued for its session (QoS 1).
      const away = await server.admin.post('/api/v1/uns/data/publish', {
        topic: 'v1/persist/away',
        value: 1,
      });
      assert.equal(away.status, 200);

      const { client: again, topics } = reconnect(options);
      const connack = await new Promise<{ sessionPresent: boolean }>((resolve) =>
        again.once('connect', resolve),
      );
      assert.equal(connack.sessionPresent, true, 'the broker kept the session');

      const res = await server.admin.post('/api/v1/uns/data/publish', { topic: 'v1/persist/back', value: 2 });
      assert.equal(res.status, 200);
      await waitFor(() => topics.includes('v1/persist/back'), 'a value published after the reconnect');
      assert.ok(!topics.some((t) => t.includes('/o/') || t.startsWith('o/')), `topics as sent: ${topics}`);
    });

    it('queues a QoS 1 publish for a persistent session while it is away, and delivers it on its return', async () => {
      const { options, publisher } = await publishedWhileAway('persistent-2', 'v1/queued');
      const { topics } = reconnect(options);
      await waitFor(() => topics.includes('v1/queued/away'), 'the value published while the device was away');
      // The session's subscription is kept; a clean session of another id does not receive queued values.
      const other = await connect(server.orgId, token, { clientId: 'clean-2' });
      const otherTopics = received(other);
      await other.subscribeAsync('v1/queued/#', { qos: 1 });
      await publisher.publishAsync('v1/queued/back', '8', { qos: 1 });
      await waitFor(
        () => topics.includes('v1/queued/back') && otherTopics.includes('v1/queued/back'),
        'both',
      );
      assert.ok(!otherTopics.includes('v1/queued/away'));
    });

    it('sends a queued QoS 1 value again, with its topic, when the session dropped before acknowledging it', async () => {
      const { options } = await publishedWhileAway('persistent-3', 'v1/resent');
      const first = reconnect(options);
      // Receives it but never acknowledges (mqtt.js sends the PUBACK once handleMessage calls back).
      first.client.handleMessage = () => {};
      await waitFor(() => first.topics.includes('v1/resent/away'), 'the first delivery');
      await first.client.endAsync(true);

      const second = reconnect(options);
      await waitFor(() => second.topics.includes('v1/resent/away'), 'the unacknowledged value, sent again');
      assert.deepEqual(second.topics, ['v1/resent/away']);
    });
  });
}
