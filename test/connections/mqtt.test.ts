import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import mqtt from 'mqtt';
import { testDialects } from '../helpers/dialects.js';
import type { TestClient } from '../helpers/http-client.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';
import { waitUntil } from '../helpers/wait.js';

/** The Mosquitto every test machine runs (brief: 127.0.0.1:1883). */
const BROKER = process.env.MERIDIAN_TEST_MOSQUITTO_URL ?? 'mqtt://127.0.0.1:1883';

for (const dialect of testDialects()) {
  describe(`MQTT against Mosquitto [${dialect}]`, () => {
    let server: TestServer;
    let admin: TestClient;
    let outside: mqtt.MqttClient;
    let connectionId: string;
    const base = `meridian-test/${randomUUID()}`;

    before(async () => {
      outside = await mqtt.connectAsync(BROKER, { reconnectPeriod: 0 });
      server = await startTestServer(dialect, {
        connectionRuntime: { tickMs: 200, leaseMs: 2000, reconnectBaseMs: 200 },
      });
      admin = server.admin;
      const res = await admin.post('/api/v1/connections', {
        name: 'Broker',
        protocol: 'mqtt',
        config: { url: BROKER },
      });
      assert.equal(res.status, 201, res.text);
      connectionId = res.body.data.id;
    });
    after(async () => {
      await server?.close();
      await outside?.endAsync();
    });

    const fn = async (body: Record<string, unknown>) => {
      const res = await admin.post(`/api/v1/connections/${connectionId}/functions`, body);
      assert.equal(res.status, 201, res.text);
      return res.body.data.id as string;
    };
    const execute = (id: string, body: Record<string, unknown> = {}) =>
      admin.post(`/api/v1/connections/${connectionId}/functions/${id}/execute`, body);

    it('publishes (a confirmed write) what another client receives', async () => {
      const topic = `${base}/setpoint`;
      const received = new Promise<string>((resolve) => {
        outside.on('message', (t, payload) => {
          if (t === topic) resolve(payload.toString());
        });
      });
      await outside.subscribeAsync(topic);
      const id = await fn({
        name: 'publish',
        type: 'mqtt.publish',
        config: { topic, payload: { sp: '((sp))' }, qos: 1 },
        parameters: [{ name: 'sp', type: 'number' }],
      });
      assert.equal((await execute(id, { parameters: { sp: 5 } })).status, 400, 'needs confirmWrites');
      const res = await execute(id, { parameters: { sp: 5 }, confirmWrites: true });
      assert.equal(res.body.data.success, true, res.text);
      assert.deepEqual(JSON.parse(await received), { sp: 5 });
    });

    it('reads a retained value', async () => {
      const topic = `${base}/retained`;
      await outside.publishAsync(topic, JSON.stringify(42.5), { retain: true, qos: 1 });
      const id = await fn({ name: 'read', type: 'mqtt.read', config: { topic, waitMs: 3000 } });
      const res = await execute(id);
      assert.equal(res.body.data.success, true, res.text);
      assert.equal(res.body.data.value, 42.5);
      await outside.publishAsync(topic, '', { retain: true, qos: 1 });
    });

    it('subscribes: each message goes into the UNS under the mapped topic', async () => {
      await fn({
        name: 'sub',
        type: 'mqtt.subscribe',
        config: { topic: `${base}/line/+/temp` },
        uns: { topic: 'v1/mqtt/in' },
      });
      await admin.post(`/api/v1/connections/${connectionId}/start`);
      await waitUntil('connected', async () => {
        const r = await admin.get(`/api/v1/connections/${connectionId}/runtime`);
        return r.body.data.state === 'connected' ? true : null;
      });
      // The subscription is made right after connecting; publish until it arrives.
      const unsTopic = `v1/mqtt/in/${base}/line/7/temp`;
      await waitUntil('the value in the UNS', async () => {
        await outside.publishAsync(`${base}/line/7/temp`, '71.5');
        const res = await admin.get(`/api/v1/uns/data/latest?topic=${encodeURIComponent(unsTopic)}`);
        return res.status === 200 && res.body.data.value === 71.5 ? true : null;
      });
      await admin.post(`/api/v1/connections/${connectionId}/stop`);
    });

    it('a broker that is not there: the execute answers success false with the error', async () => {
      const other = await admin.post('/api/v1/connections', {
        name: 'Nowhere',
        protocol: 'mqtt',
        config: { url: 'mqtt://127.0.0.1:1', timeoutMs: 1000 },
      });
      const f = await admin.post(`/api/v1/connections/${other.body.data.id}/functions`, {
        name: 'r',
        type: 'mqtt.read',
        config: { topic: 'x' },
      });
      const res = await admin.post(
        `/api/v1/connections/${other.body.data.id}/functions/${f.body.data.id}/execute`,
        {},
      );
      assert.equal(res.status, 200);
      assert.equal(res.body.data.success, false);
      assert.equal(res.body.data.quality, 2);
      assert.match(res.body.data.error, /cannot connect to the broker/);
    });
  });
}
