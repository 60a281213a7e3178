import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { testDialects } from '../helpers/dialects.js';
import type { TestClient } from '../helpers/http-client.js';
import { type MqttTestServer, startMqttTestServer } from './mqtt-test-server.js';
import { unsCounts } from './uns-helpers.js';

const PUBLISH = '/api/v1/uns/data/publish';
const LOOKALIKES = [
  ['a zero-width space', 'v1/plant/pre\u200Bss/temp'],
  ['a right-to-left override', 'v1/plant/\u202Epress/temp'],
  ['a decomposed accent (not NFC)', 'v1/plant/cafe\u0301/temp'],
] as const;

for (const dialect of testDialects()) {
  describe(`UNS topics: lookalike characters are refused over HTTP and MQTT [${dialect}]`, () => {
    let mqttServer: MqttTestServer;
    let api: TestClient;

    before(async () => {
      mqttServer = await startMqttTestServer(dialect);
      api = mqttServer.api;
    });
    after(() => mqttServer?.close());

    for (const [name, topic] of LOOKALIKES) {
      it(`refuses a topic with ${name} over HTTP with 400, storing nothing`, async () => {
        const before = await unsCounts(mqttServer.server);
        const res = await api.post(PUBLISH, { topic, value: 1 });
        assert.equal(res.status, 400, res.text);
        assert.match(
          res.body.message,
          /^topic must (not contain invisible format characters|be in Unicode normalization form NFC)/,
        );
        assert.deepEqual(await unsCounts(mqttServer.server), before);
      });

      it(`refuses a filter with ${name} over HTTP`, async () => {
        const res = await api.get(
          `/api/v1/uns/topics?filter=${encodeURIComponent(topic.replace('/temp', '/#'))}`,
        );
        assert.equal(res.status, 400, res.text);
      });

      it(`refuses an MQTT publish with ${name}: the client is disconnected and nothing stored`, async () => {
        const before = await unsCounts(mqttServer.server);
        const client = await mqttServer.open();
        const closed = new Promise<void>((resolve) => client.once('close', () => resolve()));
        client.publish(topic, '1', { qos: 1 });
        await closed;
        assert.deepEqual(await unsCounts(mqttServer.server), before);
      });
    }

    it('accepts the NFC form of an accented topic over HTTP and MQTT', async () => {
      assert.equal((await api.post(PUBLISH, { topic: 'v1/plant/caf\u00E9/temp', value: 1 })).status, 200);
      const client = await mqttServer.open();
      await client.publishAsync('v1/plant/caf\u00E9/mqtt', '2', { qos: 1 });
      const latest = await api.get(
        `/api/v1/uns/data/latest?topic=${encodeURIComponent('v1/plant/caf\u00E9/mqtt')}`,
      );
      assert.equal(latest.body.data.value, 2);
    });
  });
}
