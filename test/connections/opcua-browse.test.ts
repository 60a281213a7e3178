import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { testDialects } from '../helpers/dialects.js';
import { signedInMember } from '../helpers/factories.js';
import { freePort } from '../helpers/free-port.js';
import type { TestClient } from '../helpers/http-client.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';
import { waitUntil } from '../helpers/wait.js';
import { type PlantServer, startPlantServer } from './opcua-plant-server.js';

const CONNECTIONS = '/api/v1/connections';
const PRESSES = 12;

for (const dialect of testDialects()) {
  describe(`OPC UA browse and pick [${dialect}]`, () => {
    let server: TestServer;
    let api: TestClient;
    let plant: PlantServer;
    let id: string;

    const browse = (query = '') => api.get(`${CONNECTIONS}/${id}/browse${query}`);

    before(async () => {
      server = await startTestServer(dialect, {
        connectionRuntime: { tickMs: 200, leaseMs: 2000, reconnectBaseMs: 200 },
      });
      api = server.admin;
      plant = await startPlantServer(await freePort(), PRESSES);
      const res = await api.post(CONNECTIONS, {
        name: 'Plant UA',
        protocol: 'opcua',
        config: { endpointUrl: plant.endpointUrl },
      });
      assert.equal(res.status, 201, res.text);
      id = res.body.data.id;
    });
    after(async () => {
      await server?.close();
      await plant?.stop();
    });

    it('without nodeId lists the Objects folder; three levels down to the variables', async () => {
      const top = await browse();
      assert.equal(top.status, 200, top.text);
      const plant1 = top.body.data.find((n: { browseName: string }) => n.browseName === '1:Plant1');
      assert.deepEqual(plant1, {
        nodeId: 'ns=1;s=Plant1',
        browseName: '1:Plant1',
        displayName: 'Plant1',
        nodeClass: 'Object',
        dataType: null,
        hasChildren: true,
      });
      const presses = await browse(`?nodeId=${encodeURIComponent('ns=1;s=Plant1')}&limit=200`);
      assert.equal(presses.body.pagination.total, PRESSES);
      assert.equal(presses.body.data[3].nodeId, 'ns=1;s=Plant1/Press04');
      assert.equal(presses.body.data[3].hasChildren, true);
      const leaves = await browse(`?nodeId=${encodeURIComponent('ns=1;s=Plant1/Press04')}`);
      assert.deepEqual(
        leaves.body.data.map((n: Record<string, unknown>) => [
          n.browseName,
          n.nodeClass,
          n.dataType,
          n.hasChildren,
        ]),
        [
          ['1:Temperature', 'Variable', 'Double', false],
          ['1:Counter', 'Variable', 'Int32', false],
        ],
      );
    });

    it('pages with limit and offset, as every list does', async () => {
      const node = encodeURIComponent('ns=1;s=Plant1');
      const first = await browse(`?nodeId=${node}&limit=5`);
      const third = await browse(`?nodeId=${node}&limit=5&offset=10`);
      assert.deepEqual(first.body.pagination, { total: PRESSES, limit: 5, offset: 0 });
      assert.deepEqual(
        first.body.data.map((n: { displayName: string }) => n.displayName),
        ['Press01', 'Press02', 'Press03', 'Press04', 'Press05'],
      );
      assert.deepEqual(
        third.body.data.map((n: { displayName: string }) => n.displayName),
        ['Press11', 'Press12'],
      );
      assert.equal((await browse(`?nodeId=${node}&limit=0`)).status, 400);
      assert.equal((await browse(`?nodeId=${node}&limit=201`)).status, 400);
    });

    it("400 for a connection that is not OPC UA, 404 for another organization's, 400 for an unknown node", async () => {
      const modbus = await api.post(CONNECTIONS, {
        name: 'Not UA',
        protocol: 'modbus-tcp',
        config: { host: '127.0.0.1', port: 502 },
      });
      const res = await api.get(`${CONNECTIONS}/${modbus.body.data.id}/browse`);
      assert.equal(res.status, 400, res.text);
      assert.match(res.body.message, /browse is for OPC UA connections.*modbus-tcp/);
      assert.equal((await api.get(`${CONNECTIONS}/0e0e0e0e-0000-4000-8000-000000000000/browse`)).status, 404);
      const unknown = await api.post(`${CONNECTIONS}/${id}/browse/functions`, {
        nodes: [{ nodeId: 'ns=1;s=Nowhere' }],
        mode: 'read',
        topic: 'v1/acme',
        intervalMs: 500,
      });
      assert.equal(unknown.status, 400, unknown.text);
      const { client } = await signedInMember(server, 'Viewer');
      assert.equal((await client.get(`${CONNECTIONS}/${id}/browse`)).status, 200);
      const refused = await client.post(`${CONNECTIONS}/${id}/browse/functions`, {
        nodes: [{ nodeId: 'ns=1;s=Plant1/Press01/Counter' }],
        mode: 'subscribe',
        topic: 'v1/acme',
      });
      assert.equal(refused.status, 403);
    });

    it('picked nodes become read functions named and published by their browse path, in one call', async () => {
      const res = await api.post(`${CONNECTIONS}/${id}/browse/functions`, {
        nodes: [
          { nodeId: 'ns=1;s=Plant1/Press02/Temperature' },
          { nodeId: 'ns=1;s=Plant1/Press03/Temperature' },
        ],
        mode: 'read',
        topic: 'v1/acme',
        intervalMs: 200,
      });
      assert.equal(res.status, 201, res.text);
      assert.deepEqual(
        res.body.data.map((f: { name: string; type: string; uns: unknown }) => [f.name, f.type, f.uns]),
        [
          [
            'Plant1/Press02/Temperature',
            'opcua.read',
            { topic: 'v1/acme/Plant1/Press02/Temperature', intervalMs: 200 },
          ],
          [
            'Plant1/Press03/Temperature',
            'opcua.read',
            { topic: 'v1/acme/Plant1/Press03/Temperature', intervalMs: 200 },
          ],
        ],
      );
      // The same picks again: 409, nothing created.
      const again = await api.post(`${CONNECTIONS}/${id}/browse/functions`, {
        nodes: [
          { nodeId: 'ns=1;s=Plant1/Press05/Temperature' },
          { nodeId: 'ns=1;s=Plant1/Press02/Temperature' },
        ],
        mode: 'read',
        topic: 'v1/acme',
        intervalMs: 200,
      });
      assert.equal(again.status, 409, again.text);
      const list = await api.get(`${CONNECTIONS}/${id}/functions?limit=200`);
      assert.equal(list.body.data.length, 2);
      assert.equal(
        (
          await api.post(`${CONNECTIONS}/${id}/browse/functions`, {
            nodes: [{ nodeId: 'ns=1;s=Plant1' }],
            mode: 'read',
            topic: 'v1/acme',
          })
        ).status,
        400,
      );
    });

    it('picked nodes subscribed: values land on browse-path topics, never on a node id', async () => {
      const res = await api.post(`${CONNECTIONS}/${id}/browse/functions`, {
        nodes: [{ nodeId: 'ns=1;s=Plant1/Press04/Counter' }, { nodeId: 'ns=1;s=Plant1/Press04/Temperature' }],
        mode: 'subscribe',
        topic: 'v1/acme',
        samplingIntervalMs: 100,
        publishingIntervalMs: 100,
      });
      assert.equal(res.status, 201, res.text);
      const [subscription] = res.body.data;
      assert.equal(subscription.type, 'opcua.subscribe');
      assert.deepEqual(subscription.uns.items, {
        'ns=1;s=Plant1/Press04/Counter': 'v1/acme/Plant1/Press04/Counter',
        'ns=1;s=Plant1/Press04/Temperature': 'v1/acme/Plant1/Press04/Temperature',
      });
      assert.equal((await api.post(`${CONNECTIONS}/${id}/start`, {})).status, 202);
      const value = await waitUntil('the subscribed temperature is in the UNS', async () => {
        const r = await api.get('/api/v1/uns/data/latest?topic=v1/acme/Plant1/Press04/Temperature');
        return r.status === 200 ? r.body.data : null;
      });
      assert.equal(value.value, 24);
      const polled = await waitUntil('a polled temperature is in the UNS', async () => {
        const r = await api.get('/api/v1/uns/data/latest?topic=v1/acme/Plant1/Press02/Temperature');
        return r.status === 200 ? r.body.data : null;
      });
      assert.equal(polled.value, 22);
      const counter = await waitUntil('the subscribed counter is in the UNS', async () => {
        const r = await api.get('/api/v1/uns/data/latest?topic=v1/acme/Plant1/Press04/Counter');
        return r.status === 200 ? r.body.data : null;
      });
      assert.equal(counter.value, 0);
      const topics = await api.get('/api/v1/uns/topics?parent=v1/acme/Plant1/Press04&limit=200');
      assert.equal(topics.status, 200, topics.text);
      assert.ok(!topics.text.includes('ns=1'), 'no node id became a topic segment');
      await api.post(`${CONNECTIONS}/${id}/stop`, {});
    });

    it('a subscription written by hand (no uns.items) publishes to browse-path topics, not node ids', async () => {
      const res = await api.post(`${CONNECTIONS}/${id}/functions`, {
        name: 'Press07 by hand',
        type: 'opcua.subscribe',
        config: {
          nodeIds: ['ns=1;s=Plant1/Press07/Counter', 'ns=1;s=Plant1/Press07/Temperature'],
          samplingIntervalMs: 100,
          publishingIntervalMs: 100,
        },
        uns: { topic: 'v1/hand' },
      });
      assert.equal(res.status, 201, res.text);
      assert.equal(res.body.data.uns.items, undefined);
      assert.equal((await api.post(`${CONNECTIONS}/${id}/start`, {})).status, 202);
      const temperature = await waitUntil('the temperature is on its browse-path topic', async () => {
        const r = await api.get('/api/v1/uns/data/latest?topic=v1/hand/Plant1/Press07/Temperature');
        return r.status === 200 ? r.body.data : null;
      });
      assert.equal(temperature.value, 27);
      const counter = await waitUntil('the counter is on its browse-path topic', async () => {
        const r = await api.get('/api/v1/uns/data/latest?topic=v1/hand/Plant1/Press07/Counter');
        return r.status === 200 ? r.body.data : null;
      });
      assert.equal(counter.value, 0);
      const under = await api.get('/api/v1/uns/topics?parent=v1/hand&limit=200');
      assert.equal(under.status, 200, under.text);
      assert.deepEqual(
        under.body.data.map((t: { name: string }) => t.name),
        ['Plant1'],
        'the only child of the subscription topic is the browse path root, not ns=1;s=Plant1',
      );
      const hand = await api.get('/api/v1/uns/topics?parent=v1/hand/Plant1/Press07&limit=200');
      assert.ok(!hand.text.includes('ns=1'), hand.text);
      await api.post(`${CONNECTIONS}/${id}/stop`, {});
    });
  });
}
