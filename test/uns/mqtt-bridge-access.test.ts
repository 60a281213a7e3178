import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import mqtt, { type MqttClient } from 'mqtt';
import { testDialects } from '../helpers/dialects.js';
import { buildOrganization } from '../helpers/factories.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';

/** The shared Mosquitto (a namespace of this suite's own keeps it apart from other suites). */
const MQTT_URL = process.env.MERIDIAN_TEST_MQTT_URL ?? 'mqtt://127.0.0.1:1883';

for (const dialect of testDialects()) {
  describe(`UNS MQTT bridge mode: a suspended organization's values are not committed [${dialect}]`, () => {
    let server: TestServer;
    let device: MqttClient;
    let org: string;
    const namespace = `meridian-access-${randomBytes(4).toString('hex')}`;

    before(async () => {
      server = await startTestServer(dialect, { config: { mqttUrl: MQTT_URL, mqttNamespace: namespace } });
      const status = await server.admin.get('/api/v1/uns/broker');
      assert.equal(status.body.data.mode, 'external');
      org = await buildOrganization(server);
      device = await mqtt.connectAsync(MQTT_URL, { reconnectPeriod: 0, protocolVersion: 5 });
    });
    after(async () => {
      await device?.endAsync();
      await server?.close();
    });

    /** The latest value of `topic` in the organization, read from storage (a suspended one answers 403). */
    const stored = async (topic: string) => {
      await server.app.uns.writer.settle();
      const row = await server.storage.db
        .selectFrom('uns_topics as t')
        .innerJoin('uns_latest as l', 'l.topic_id', 't.id')
        .select('l.value_json')
        .where('t.organization_id', '=', org)
        .where('t.path', '=', topic)
        .executeTakeFirst();
      return row?.value_json ?? null;
    };
    const sendAndWait = async (topic: string, value: number, ms = 1500) => {
      await device.publishAsync(`${namespace}/${org}/${topic}`, String(value), { qos: 1 });
      const until = Date.now() + ms;
      while (Date.now() < until) {
        if ((await stored(topic)) !== null) return true;
        await new Promise((r) => setTimeout(r, 50));
      }
      return false;
    };

    it('commits while active, stops at once when suspended, and commits again once activated', async () => {
      assert.equal(await sendAndWait('v1/bridge/line/before', 1, 5000), true, 'committed while active');

      const suspended = await server.admin.post(`/api/v1/organizations/${org}/suspend`, {});
      assert.equal(suspended.status, 200, suspended.text);
      assert.equal(await sendAndWait('v1/bridge/line/while', 2), false, 'nothing committed while suspended');

      const activated = await server.admin.post(`/api/v1/organizations/${org}/activate`, {});
      assert.equal(activated.status, 200, activated.text);
      assert.equal(await sendAndWait('v1/bridge/line/after', 3, 5000), true, 'committed again once active');
    });
  });
}
