import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { CommitJob } from '../../src/modules/uns/historian/historian-writer.js';
import { testDialects } from '../helpers/dialects.js';
import { type MqttTestServer, startMqttTestServer } from './mqtt-test-server.js';

for (const dialect of testDialects()) {
  describe(`UNS MQTT: a QoS 1 PUBACK follows the commit [${dialect}]`, () => {
    let mqttServer: MqttTestServer;
    const events: string[] = [];

    before(async () => {
      mqttServer = await startMqttTestServer(dialect);
      // The historian's commit, hooked: it records when a commit of the test's topic starts and when it
      // is durable, and holds it back a while, so that an early PUBACK would overtake it.
      const writer = mqttServer.server.app.uns.writer;
      const write = writer.write.bind(writer);
      writer.write = async (jobs: readonly CommitJob[]) => {
        const ours = jobs.some((job) => job.records.some((r) => r.record.topic.startsWith('v1/puback/')));
        if (!ours) return write(jobs);
        events.push('commit started');
        await new Promise((resolve) => setTimeout(resolve, 300));
        await write(jobs);
        events.push('committed');
      };
    });
    after(() => mqttServer?.close());

    it('sends the PUBACK only once the value is committed', async () => {
      const client = await mqttServer.open();
      await new Promise<void>((resolve, reject) =>
        client.publish('v1/puback/line/value', '42', { qos: 1 }, (error) => {
          if (error) reject(error);
          else {
            events.push('puback');
            resolve();
          }
        }),
      );
      assert.deepEqual(events, ['commit started', 'committed', 'puback']);
      const latest = await mqttServer.api.get('/api/v1/uns/data/latest?topic=v1/puback/line/value');
      assert.equal(latest.body.data.value, 42);
    });
  });
}
