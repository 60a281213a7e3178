/**
 * Sparkplug B metrics flagged `is_historical` and `is_null` (Sparkplug 3.0, 6.4.9 Metric), sent by a raw
 * MQTT client with payloads encoded by Eclipse Tahu's codec into the embedded broker.
 * - tck-id-payloads-metric-historical: an `is_historical` metric is history; Meridian stores it in the
 *   topic's history and never as the latest value, even when its timestamp is the newest.
 * - tck-id-payloads-metric-is-null: an `is_null` metric carries no value; the UNS keeps no null, so
 *   Meridian stores nothing for it and counts it in the node view (`nullValues`).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { encodePayload, type UMetric } from 'sparkplug-payload/lib/sparkplugbpayload.js';
import { testDialects } from '../helpers/dialects.js';
import { waitUntil } from '../helpers/wait.js';
import { type MqttTestServer, startMqttTestServer } from './mqtt-test-server.js';

const T0 = Date.now() - 60_000;

for (const dialect of testDialects()) {
  describe(`Sparkplug B historical and null metrics [${dialect}]`, () => {
    let mqtt: MqttTestServer;

    before(async () => {
      mqtt = await startMqttTestServer(dialect);
    });
    after(async () => {
      await mqtt?.close();
    });

    const latest = async (topic: string) =>
      ((await mqtt.api.get(`/api/v1/uns/data/latest?topic=${encodeURIComponent(topic)}`)).body.data ??
        null) as { value: unknown; timestamp: string } | null;
    const history = async (topic: string) => {
      const res = await mqtt.api.get(
        `/api/v1/uns/data/history?topic=${encodeURIComponent(topic)}&from=${new Date(T0 - 1000).toISOString()}&to=${new Date(T0 + 60_000).toISOString()}`,
      );
      assert.equal(res.status, 200, res.text);
      return (res.body.data as { value: unknown; timestamp: string }[]).map((v) => [
        Date.parse(v.timestamp) - T0,
        v.value,
      ]);
    };
    const view = async (groupId: string) =>
      (await mqtt.api.get('/api/v1/uns/sparkplug/nodes')).body.data.find(
        (n: { groupId: string }) => n.groupId === groupId,
      ) as { nullValues: number; seqErrors: number; online: boolean };

    async function bornNode(groupId: string) {
      const raw = await mqtt.open();
      const send = (type: string, seq: number, timestamp: number, metrics: Partial<UMetric>[]) =>
        raw.publishAsync(
          `spBv1.0/${groupId}/${type}/Edge1`,
          Buffer.from(encodePayload({ timestamp, seq, metrics: metrics as UMetric[] })),
        );
      await send('NBIRTH', 0, T0 + 10_000, [
        { name: 'bdSeq', type: 'Int64', value: 0 },
        { name: 'Temperature', alias: 1, type: 'Double', value: 20 },
        { name: 'Mode', alias: 2, type: 'String', value: 'auto' },
      ]);
      await waitUntil(
        'the birth is in the UNS',
        async () => (await latest(`v1/${groupId}/Edge1/Mode`)) ?? null,
      );
      return send;
    }

    it('an is_historical metric is stored in history and never becomes the latest value, even with the newest timestamp (tck-id-payloads-metric-historical)', async () => {
      const send = await bornNode('HistPlant');
      const topic = 'v1/HistPlant/Edge1/Temperature';
      // Newer than the birth's value, but historical: the latest stays the birth's 20.
      await send('NDATA', 1, T0 + 30_000, [
        {
          alias: 1,
          type: 'Double',
          value: 5,
          isHistorical: true,
          timestamp: T0 + 30_000,
        } as Partial<UMetric>,
      ]);
      await waitUntil('the historical value is in history', async () =>
        (await history(topic)).length === 2 ? true : null,
      );
      assert.deepEqual(await history(topic), [
        [10_000, 20],
        [30_000, 5],
      ]);
      const current = await latest(topic);
      assert.equal(current!.value, 20, 'the historical value did not become the latest');
      assert.equal(Date.parse(current!.timestamp), T0 + 10_000);
      // A live (not historical) value after it does become the latest.
      await send('NDATA', 2, T0 + 20_000, [{ alias: 1, type: 'Double', value: 21 }]);
      await waitUntil('the live value is the latest', async () =>
        (await latest(topic))?.value === 21 ? true : null,
      );
      assert.equal((await view('HistPlant')).seqErrors, 0);
    });

    it('an is_null metric stores nothing (the UNS keeps no null), leaves the latest value as it was, and is counted in the node view (tck-id-payloads-metric-is-null)', async () => {
      const send = await bornNode('NullPlant');
      const topic = 'v1/NullPlant/Edge1/Mode';
      assert.equal((await view('NullPlant')).nullValues, 0);
      await send('NDATA', 1, T0 + 20_000, [{ alias: 2, type: 'String', isNull: true } as Partial<UMetric>]);
      // A value after it in another metric proves the null message was processed before we look.
      await send('NDATA', 2, T0 + 21_000, [{ alias: 1, type: 'Double', value: 22 }]);
      await waitUntil('the later value is in', async () =>
        (await latest('v1/NullPlant/Edge1/Temperature'))?.value === 22 ? true : null,
      );
      const node = await view('NullPlant');
      assert.equal(node.nullValues, 1);
      assert.equal(node.seqErrors, 0);
      assert.equal((await latest(topic))!.value, 'auto');
      assert.deepEqual(await history(topic), [[10_000, 'auto']], 'no row for the null');
    });
  });
}
