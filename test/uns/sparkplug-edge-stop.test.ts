/**
 * Meridian's edge node on the embedded broker when Meridian stops. A clean stop publishes the node's
 * NDEATH, with the bdSeq of its birth, before the broker closes its connections
 * (tck-id-operational-behavior-edge-node-intentional-disconnect-ndeath, tck-id-payloads-ndeath-bdseq),
 * decoded with Eclipse Tahu's codec. (A crash takes the embedded broker down with it: its subscribers
 * lose the broker itself, which is what tells them; see the README.)
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { decodePayload, type UPayload } from 'sparkplug-payload/lib/sparkplugbpayload.js';
import { testDialects } from '../helpers/dialects.js';
import { waitUntil } from '../helpers/wait.js';
import { startMqttTestServer } from './mqtt-test-server.js';

const EDGE = {
  groupId: 'Meridian',
  edgeNodeId: 'UNS',
  devices: [{ deviceId: 'Line1', prefix: 'v1/stop/line1' }],
};

for (const dialect of testDialects()) {
  describe(`Meridian's edge node when Meridian stops [${dialect}]`, () => {
    it('a clean stop publishes the NDEATH of the birth before the broker closes', async () => {
      const mqtt = await startMqttTestServer(dialect);
      try {
        const host = await mqtt.open();
        const received: { topic: string; payload: UPayload }[] = [];
        host.on('message', (topic, payload) => received.push({ topic, payload: decodePayload(payload) }));
        await host.subscribeAsync('spBv1.0/Meridian/#', { qos: 1 });
        const admin = mqtt.server.admin.inOrg(mqtt.server.orgId);
        const { version } = (await admin.get('/api/v1/organizations/settings')).body.data;
        const patched = await admin.patch('/api/v1/organizations/settings', {
          version,
          sparkplug: { edgeNode: EDGE },
        });
        assert.equal(patched.status, 200, patched.text);
        const bdSeqOf = (payload: UPayload) =>
          Number(payload.metrics!.find((m) => m.name === 'bdSeq')!.value);
        const nbirth = await waitUntil('the NBIRTH', () =>
          received.find((m) => m.topic.includes('/NBIRTH/')),
        );

        await mqtt.server.close();
        const ndeath = await waitUntil(
          'the NDEATH, received before the connection closed',
          () => received.find((m) => m.topic === 'spBv1.0/Meridian/NDEATH/UNS'),
          5000,
        );
        assert.equal(bdSeqOf(ndeath.payload), bdSeqOf(nbirth.payload));
      } finally {
        await mqtt.close().catch(() => {});
      }
    });
  });
}
