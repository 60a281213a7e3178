/**
 * Meridian as a Sparkplug B edge node (organization setting `sparkplug.edgeNode`), checked by a host
 * application written from the Sparkplug 3.0 specification with Eclipse Tahu's codec (`sparkplug-payload`),
 * not Meridian's own decoder, subscribed to the organization's `spBv1.0/#` on the embedded broker.
 * - tck-id-payloads-nbirth-seq: NBIRTH carries seq 0; tck-id-payloads-nbirth-bdseq: and a bdSeq metric;
 *   tck-id-payloads-nbirth-rebirth-req: and `Node Control/Rebirth` (Boolean).
 * - tck-id-payloads-dbirth-seq / tck-id-payloads-sequence-num-incrementing: every message after it the next seq.
 * - tck-id-topics-dbirth-metric-reqs: a DBIRTH carries every metric with its datatype (and alias).
 * - tck-id-payloads-alias-data-cmd-requirement: DDATA carries aliases, not names.
 * - tck-id-operational-behavior-edge-node-birth-sequence-rebirth: NCMD Node Control/Rebirth makes births again.
 * - tck-id-payloads-ndeath-bdseq: the NDEATH's bdSeq is the birth's.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { MqttClient } from 'mqtt';
import {
  decodePayload,
  encodePayload,
  type UMetric,
  type UPayload,
} from 'sparkplug-payload/lib/sparkplugbpayload.js';
import { testDialects } from '../helpers/dialects.js';
import { waitUntil } from '../helpers/wait.js';
import { type MqttTestServer, startMqttTestServer } from './mqtt-test-server.js';

const EDGE = {
  groupId: 'Meridian',
  edgeNodeId: 'UNS',
  devices: [{ deviceId: 'Line1', prefix: 'v1/edge/line1' }],
};

for (const dialect of testDialects()) {
  describe(`Meridian as a Sparkplug B edge node [${dialect}]`, () => {
    let mqtt: MqttTestServer;
    let host: MqttClient;
    const received: { topic: string; payload: UPayload }[] = [];

    before(async () => {
      mqtt = await startMqttTestServer(dialect);
      host = await mqtt.open();
      host.on('message', (topic, payload) => received.push({ topic, payload: decodePayload(payload) }));
      await host.subscribeAsync('spBv1.0/Meridian/#');
    });
    after(async () => {
      await mqtt?.close();
    });

    const settings = async () =>
      (await mqtt.server.admin.inOrg(mqtt.server.orgId).get('/api/v1/organizations/settings')).body.data;
    const patch = async (body: Record<string, unknown>) =>
      mqtt.server.admin
        .inOrg(mqtt.server.orgId)
        .patch('/api/v1/organizations/settings', { version: (await settings()).version, ...body });
    const publish = async (topic: string, value: unknown) => {
      const res = await mqtt.api.post('/api/v1/uns/data/publish', { topic, value });
      assert.ok(res.status === 200 || res.status === 201 || res.status === 202, res.text);
    };
    const message = (type: string, from = 0) =>
      waitUntil(`a ${type}`, () => received.slice(from).find((m) => m.topic.includes(`/${type}/`)) ?? null);
    const metric = (payload: UPayload, name: string) => payload.metrics!.find((m) => m.name === name)!;

    it('refuses a bad edge node setting with 400 and changes nothing', async () => {
      const before = await settings();
      const res = await patch({ sparkplug: { edgeNode: { ...EDGE, groupId: 'a/b' } } });
      assert.equal(res.status, 400, res.text);
      const unknownMember = await patch({ sparkplug: { edgeNode: { ...EDGE, extra: 1 } } });
      assert.equal(unknownMember.status, 400, unknownMember.text);
      const after = await settings();
      assert.equal(after.version, before.version);
      assert.equal(after.sparkplug.edgeNode, null);
    });

    it('births the configured UNS subtree as a device, sends DDATA by alias on change, rebirths on NCMD, refuses writes, and dies with the birth bdSeq', async () => {
      await publish('v1/edge/line1/temp', 21.5);
      await publish('v1/edge/line1/state', 'run');
      await publish('v1/edge/other/ignored', 1);
      const res = await patch({ sparkplug: { edgeNode: EDGE } });
      assert.equal(res.status, 200, res.text);

      const nbirth = await message('NBIRTH');
      assert.equal(nbirth.topic, 'spBv1.0/Meridian/NBIRTH/UNS');
      assert.equal(Number(nbirth.payload.seq), 0);
      const bdSeq = Number(metric(nbirth.payload, 'bdSeq').value);
      assert.equal(metric(nbirth.payload, 'Node Control/Rebirth').type, 'Boolean');
      const dbirth = await message('DBIRTH');
      assert.equal(dbirth.topic, 'spBv1.0/Meridian/DBIRTH/UNS/Line1');
      assert.equal(Number(dbirth.payload.seq), 1);
      const birthMetrics = dbirth.payload.metrics!.map((m) => [m.name, m.type, m.value]).sort();
      assert.deepEqual(birthMetrics, [
        ['state', 'String', 'run'],
        ['temp', 'Double', 21.5],
      ]);
      const tempAlias = Number(metric(dbirth.payload, 'temp').alias);

      // A change: DDATA by alias, the next seq.
      const from = received.length;
      await publish('v1/edge/line1/temp', 23.25);
      const ddata = await message('DDATA', from);
      assert.equal(ddata.topic, 'spBv1.0/Meridian/DDATA/UNS/Line1');
      assert.equal(Number(ddata.payload.seq), 2);
      assert.deepEqual(
        ddata.payload.metrics!.map((m) => [m.name ?? null, Number(m.alias), m.value]),
        [[null, tempAlias, 23.25]],
      );

      // A host asks for a rebirth: births again, seq 0, the same bdSeq (same session).
      const beforeRebirth = received.length;
      await host.publishAsync(
        'spBv1.0/Meridian/NCMD/UNS',
        Buffer.from(
          encodePayload({
            timestamp: Date.now(),
            metrics: [{ name: 'Node Control/Rebirth', type: 'Boolean', value: true }] as UMetric[],
          }),
        ),
      );
      const reborn = await message('NBIRTH', beforeRebirth);
      assert.equal(Number(reborn.payload.seq), 0);
      assert.equal(Number(metric(reborn.payload, 'bdSeq').value), bdSeq);
      const redbirth = await message('DBIRTH', beforeRebirth);
      assert.equal(metric(redbirth.payload, 'temp').value, 23.25);

      // A write (DCMD) is refused: nothing is written to the UNS.
      await host.publishAsync(
        'spBv1.0/Meridian/DCMD/UNS/Line1',
        Buffer.from(
          encodePayload({
            timestamp: Date.now(),
            metrics: [{ name: 'temp', type: 'Double', value: 5 }] as UMetric[],
          }),
        ),
      );
      await new Promise((r) => setTimeout(r, 300));
      const latest = await mqtt.api.get(
        `/api/v1/uns/data/latest?topic=${encodeURIComponent('v1/edge/line1/temp')}`,
      );
      assert.equal(latest.body.data.value, 23.25, 'the write was refused');

      // The edge node is switched off: its NDEATH carries the birth's bdSeq.
      const beforeDeath = received.length;
      assert.equal((await patch({ sparkplug: { edgeNode: null } })).status, 200);
      const ndeath = await message('NDEATH', beforeDeath);
      assert.equal(ndeath.topic, 'spBv1.0/Meridian/NDEATH/UNS');
      assert.equal(Number(metric(ndeath.payload, 'bdSeq').value), bdSeq);
    });
  });
}
