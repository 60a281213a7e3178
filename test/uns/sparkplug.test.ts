/**
 * Sparkplug B into the UNS through the embedded broker, with an edge node written from the spec by
 * Eclipse Tahu's `sparkplug-client` (its own bdSeq, seq and NDEATH will), and raw MQTT clients for what
 * a well-behaved node never sends. Normative statements are cited by their Sparkplug 3.0 TCK ids.
 */
import assert from 'node:assert/strict';
import type { Socket } from 'node:net';
import { after, before, describe, it } from 'node:test';
import sparkplug from 'sparkplug-client';
import { decodePayload, encodePayload, type UMetric } from 'sparkplug-payload/lib/sparkplugbpayload.js';
import { testDialects } from '../helpers/dialects.js';
import { waitUntil } from '../helpers/wait.js';
import { type MqttTestServer, startMqttTestServer } from './mqtt-test-server.js';

type EdgeNode = ReturnType<typeof sparkplug.newClient>;

const T0 = Date.now() - 60_000;

for (const dialect of testDialects()) {
  describe(`Sparkplug B host application in the embedded broker [${dialect}]`, () => {
    let mqtt: MqttTestServer;
    const nodes: EdgeNode[] = [];

    before(async () => {
      mqtt = await startMqttTestServer(dialect);
    });
    after(async () => {
      for (const node of nodes) {
        try {
          node.stop();
        } catch {}
      }
      await mqtt?.close();
    });

    const latest = async (topic: string) =>
      ((await mqtt.api.get(`/api/v1/uns/data/latest?topic=${encodeURIComponent(topic)}`)).body.data ??
        null) as {
        value: unknown;
        quality: number;
        timestamp: string;
      } | null;

    /** An edge node that sends its births when connected, as Tahu's client asks its application to. */
    const edgeNode = (groupId: string, edgeNode: string, births: (node: EdgeNode) => void) => {
      const node = sparkplug.newClient({
        serverUrl: mqtt.url,
        username: mqtt.server.orgId,
        password: mqtt.token,
        groupId,
        edgeNode,
        clientId: `${groupId}-${edgeNode}-${Math.random().toString(16).slice(2)}`,
        version: 'spBv1.0',
        mqttOptions: { reconnectPeriod: 0 },
      } as Parameters<typeof sparkplug.newClient>[0]);
      node.on('birth', () => births(node));
      node.on('error', () => {});
      nodes.push(node);
      return node;
    };

    const nodeBirth = (node: EdgeNode) => {
      node.publishNodeBirth({
        timestamp: T0,
        metrics: [
          {
            name: 'Line/Temperature',
            alias: 1,
            type: 'Double',
            value: 21.5,
            properties: { 'Engineering Units': { type: 'String', value: 'degC' } },
          },
          { name: 'Counter', alias: 2, type: 'Int64', value: 10 },
        ] as UMetric[],
      });
      node.publishDeviceBirth('Press4', {
        timestamp: T0,
        metrics: [{ name: 'Pressure', alias: 3, type: 'Float', value: 2.5 }] as UMetric[],
      });
    };

    it('births and data by alias reach the UNS under v1/<group>/<node>[/<device>]/<metric>, with their timestamps; the node view shows them', async () => {
      const node = edgeNode('Plant1', 'Edge1', nodeBirth);
      await waitUntil(
        'the birth is in the UNS',
        async () => (await latest('v1/Plant1/Edge1/Press4/Pressure')) ?? null,
      );
      const temperature = await latest('v1/Plant1/Edge1/Line/Temperature');
      assert.equal(temperature!.value, 21.5);
      assert.equal(Date.parse(temperature!.timestamp), T0);
      node.publishNodeData({
        timestamp: T0 + 1000,
        metrics: [{ alias: 1, type: 'Double', value: 22.75 }] as UMetric[],
      });
      node.publishDeviceData('Press4', {
        timestamp: T0 + 1000,
        metrics: [{ alias: 3, type: 'Float', value: 3.25 }] as UMetric[],
      });
      const pressure = await waitUntil('the device data is in the UNS', async () => {
        const value = await latest('v1/Plant1/Edge1/Press4/Pressure');
        return value?.value === 3.25 ? value : null;
      });
      assert.equal(pressure.quality, 0);
      assert.equal((await latest('v1/Plant1/Edge1/Line/Temperature'))!.value, 22.75);
      const history = await mqtt.api.get(
        `/api/v1/uns/data/history?topic=${encodeURIComponent('v1/Plant1/Edge1/Line/Temperature')}&from=${new Date(T0 - 1000).toISOString()}&to=${new Date(T0 + 5000).toISOString()}`,
      );
      assert.deepEqual(
        history.body.data.map((v: { value: unknown }) => v.value),
        [21.5, 22.75],
        history.text,
      );
      const view = await mqtt.api.get('/api/v1/uns/sparkplug/nodes');
      assert.equal(view.status, 200, view.text);
      const edge = view.body.data.find((n: { edgeNodeId: string }) => n.edgeNodeId === 'Edge1');
      assert.equal(edge.groupId, 'Plant1');
      assert.equal(edge.online, true);
      assert.equal(edge.metrics, 2);
      assert.equal(edge.seqErrors, 0);
      assert.deepEqual(
        edge.devices.map((d: { deviceId: string; online: boolean; metrics: number }) => [
          d.deviceId,
          d.online,
          d.metrics,
        ]),
        [['Press4', true, 1]],
      );
    });

    it('relays the Sparkplug messages as they came to the organization subscribers of spBv1.0/#', async () => {
      const listener = await mqtt.open();
      const received: { topic: string; payload: Buffer }[] = [];
      listener.on('message', (topic, payload) => received.push({ topic, payload }));
      await listener.subscribeAsync('spBv1.0/Plant2/#');
      const node = edgeNode('Plant2', 'Edge1', nodeBirth);
      await waitUntil('the NBIRTH is relayed', async () =>
        received.some((m) => m.topic === 'spBv1.0/Plant2/NBIRTH/Edge1') ? true : null,
      );
      const birth = decodePayload(received.find((m) => m.topic === 'spBv1.0/Plant2/NBIRTH/Edge1')!.payload);
      assert.ok(birth.metrics!.some((m) => m.name === 'Counter'));
      node.stop();
    });

    it('an NDEATH by will (connection lost) marks every metric of the node and its devices bad, the value kept; a rebirth restores them (tck-id-operational-behavior-edge-node-termination-host-action-ndeath-node-tags-stale)', async () => {
      const node = edgeNode('Plant3', 'Edge1', nodeBirth);
      await waitUntil('born', async () => (await latest('v1/Plant3/Edge1/Press4/Pressure')) ?? null);
      // The connection drops without a DISCONNECT: the broker publishes the node's will, its NDEATH.
      (node as unknown as { client: { stream: Socket } }).client.stream.destroy();
      const dead = await waitUntil('the death is in the UNS', async () => {
        const value = await latest('v1/Plant3/Edge1/Line/Temperature');
        return value?.quality === 2 ? value : null;
      });
      assert.equal(dead.value, 21.5, 'the value is kept');
      assert.equal((await latest('v1/Plant3/Edge1/Press4/Pressure'))!.quality, 2);
      const view = await mqtt.api.get('/api/v1/uns/sparkplug/nodes');
      const edge = view.body.data.find((n: { groupId: string }) => n.groupId === 'Plant3');
      assert.equal(edge.online, false);
      assert.equal(edge.devices[0].online, false);
    });

    it('data before a birth, a sequence gap and an unknown alias each ask the node for a rebirth: NCMD Node Control/Rebirth = true', async () => {
      const raw = await mqtt.open();
      const commands: UMetric[][] = [];
      raw.on('message', (_topic, payload) => commands.push(decodePayload(payload).metrics as UMetric[]));
      await raw.subscribeAsync('spBv1.0/Plant4/NCMD/Edge1');
      const send = (type: string, seq: number, metrics: Partial<UMetric>[]) =>
        raw.publishAsync(
          `spBv1.0/Plant4/${type}/Edge1`,
          Buffer.from(encodePayload({ timestamp: Date.now(), seq, metrics: metrics as UMetric[] })),
        );
      await send('NDATA', 7, [{ alias: 1, type: 'Double', value: 1 }]);
      await waitUntil('a rebirth request for data before birth', async () =>
        commands.length === 1 ? true : null,
      );
      assert.deepEqual(
        commands[0]!.map((m) => [m.name, m.value]),
        [['Node Control/Rebirth', true]],
      );
      assert.equal(await latest('v1/Plant4/Edge1/Temperature'), null, 'nothing published before the birth');
      // After a birth, data by name works; then a gap.
      await send('NBIRTH', 0, [
        { name: 'bdSeq', type: 'Int64', value: 0 },
        { name: 'Temperature', alias: 1, type: 'Double', value: 20 },
      ]);
      await send('NDATA', 1, [{ name: 'Temperature', type: 'Double', value: 20.5 }]);
      await waitUntil('data by name', async () =>
        (await latest('v1/Plant4/Edge1/Temperature'))?.value === 20.5 ? true : null,
      );
      const view = async () =>
        (await mqtt.api.get('/api/v1/uns/sparkplug/nodes')).body.data.find(
          (n: { groupId: string }) => n.groupId === 'Plant4',
        );
      await send('NDATA', 5, [{ alias: 1, type: 'Double', value: 21 }]);
      await waitUntil('the gap is counted', async () => ((await view()).seqErrors === 1 ? true : null));
      // Within the debounce (5 s) a second problem sends no second request.
      await send('NDATA', 6, [{ alias: 99, type: 'Double', value: 1 }]);
      await new Promise((r) => setTimeout(r, 300));
      assert.equal(commands.length, 1, 'debounced');
    });
  });
}
