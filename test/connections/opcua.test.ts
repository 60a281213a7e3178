import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { testDialects } from '../helpers/dialects.js';
import { freePort } from '../helpers/free-port.js';
import type { TestClient } from '../helpers/http-client.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';
import { waitUntil } from '../helpers/wait.js';
import { OPCUA_PASSWORD, OPCUA_USER, OpcuaTestServer } from './opcua-test-server.js';

for (const dialect of testDialects()) {
  describe(`OPC UA against node-opcua's server [${dialect}]`, () => {
    let server: TestServer;
    let admin: TestClient;
    let device: OpcuaTestServer;

    before(async () => {
      device = new OpcuaTestServer(await freePort());
      await device.start();
      server = await startTestServer(dialect, {
        connectionRuntime: { tickMs: 200, leaseMs: 2000, reconnectBaseMs: 200 },
      });
      admin = server.admin;
    });
    after(async () => {
      await server?.close();
      await device?.stop();
    });

    const connection = async (name: string, config: Record<string, unknown>) => {
      const res = await admin.post('/api/v1/connections', {
        name,
        protocol: 'opcua',
        config: { endpointUrl: device.endpointUrl, ...config },
      });
      assert.equal(res.status, 201, res.text);
      return res.body.data.id as string;
    };
    const fn = async (connectionId: string, body: Record<string, unknown>) => {
      const res = await admin.post(`/api/v1/connections/${connectionId}/functions`, body);
      assert.equal(res.status, 201, res.text);
      return res.body.data.id as string;
    };
    const execute = (connectionId: string, id: string, body: Record<string, unknown> = {}) =>
      admin.post(`/api/v1/connections/${connectionId}/functions/${id}/execute`, body);
    const runtime = async (id: string) => (await admin.get(`/api/v1/connections/${id}/runtime`)).body.data;

    it('anonymous, security None: browses, reads with the status as quality, writes only when confirmed', async () => {
      const id = await connection('Anonymous', {});
      const browse = await fn(id, { name: 'browse', type: 'opcua.browse', config: { nodeId: 'i=85' } });
      const objects = await execute(id, browse);
      assert.equal(objects.body.data.success, true, objects.text);
      const press = objects.body.data.value.references.find((r: { browseName: string }) =>
        r.browseName.endsWith('Press4'),
      );
      assert.ok(press, JSON.stringify(objects.body.data.value));
      const children = await execute(
        id,
        await fn(id, { name: 'browse press', type: 'opcua.browse', config: { nodeId: press.nodeId } }),
      );
      const names = children.body.data.value.references.map((r: { browseName: string }) =>
        r.browseName.split(':').pop(),
      );
      assert.ok(names.includes('Temperature') && names.includes('Pressure'), names.join(','));

      const read = await fn(id, {
        name: 'temperature',
        type: 'opcua.read',
        config: { nodeId: '((node))' },
        parameters: [{ name: 'node', type: 'string', default: 'ns=1;s=Press4.Temperature' }],
      });
      const temperature = await execute(id, read);
      assert.equal(temperature.body.data.value, 20.5);
      assert.equal(temperature.body.data.quality, 0);
      const pressure = await execute(id, read, { parameters: { node: 'ns=1;s=Press4.Pressure' } });
      assert.equal(pressure.body.data.value, 3.2);
      assert.equal(pressure.body.data.quality, 1, 'Uncertain status is quality 1');
      const missing = await execute(id, read, { parameters: { node: 'ns=1;s=Nope' } });
      assert.equal(missing.body.data.quality, 2, 'BadNodeIdUnknown is quality 2');

      const write = await fn(id, {
        name: 'setpoint',
        type: 'opcua.write',
        config: { nodeId: 'ns=1;s=Press4.Temperature', value: '((v))' },
        parameters: [{ name: 'v', type: 'number' }],
      });
      const refused = await execute(id, write, { parameters: { v: 80.25 } });
      assert.equal(refused.status, 400);
      assert.equal(device.temperature, 20.5);
      const written = await execute(id, write, { parameters: { v: 80.25 }, confirmWrites: true });
      assert.equal(written.body.data.success, true, written.text);
      assert.equal(device.temperature, 80.25);
      assert.equal((await execute(id, read)).body.data.value, 80.25);
    });

    it('user and password over Basic256Sha256 SignAndEncrypt', async () => {
      const id = await connection('Secure', {
        securityMode: 'SignAndEncrypt',
        securityPolicy: 'Basic256Sha256',
        username: OPCUA_USER,
        password: OPCUA_PASSWORD,
      });
      const read = await fn(id, {
        name: 't',
        type: 'opcua.read',
        config: { nodeId: 'ns=1;s=Press4.Temperature' },
      });
      const res = await execute(id, read);
      assert.equal(res.body.data.success, true, res.text);
      assert.equal(typeof res.body.data.value, 'number');
      assert.ok(!res.text.includes(OPCUA_PASSWORD));
    });

    it('subscribes into the UNS; one session however often it is started', async () => {
      const id = await connection('Subscribed', {});
      await fn(id, {
        name: 'count',
        type: 'opcua.subscribe',
        config: {
          nodeIds: ['ns=1;s=Press4.Count', 'ns=1;s=Press4.Pressure'],
          samplingIntervalMs: 50,
          publishingIntervalMs: 100,
        },
        uns: { topic: 'v1/plant/press4', items: { 'ns=1;s=Press4.Count': 'v1/plant/press4/count' } },
      });
      const sessionsBefore = device.sessions();
      assert.equal((await admin.post(`/api/v1/connections/${id}/start`)).status, 202);
      assert.equal((await admin.post(`/api/v1/connections/${id}/start`)).status, 202);
      await waitUntil('connected', async () => ((await runtime(id)).state === 'connected' ? true : null));
      assert.equal(device.sessions(), sessionsBefore + 1);
      for (let i = 1; i <= 5; i++) {
        device.setCount(i);
        await waitUntil(`count ${i} in the UNS`, async () => {
          const res = await admin.get('/api/v1/uns/data/latest?topic=v1/plant/press4/count');
          return res.body.data?.value === i ? true : null;
        });
      }
      // An item uns.items does not name goes under the prefix by its browse path, not its node id.
      const pressure = await waitUntil('pressure under the prefix by its browse path', async () => {
        const res = await admin.get('/api/v1/uns/data/latest?topic=v1/plant/press4/Press4/Pressure');
        return res.status === 200 ? res.body.data : null;
      });
      assert.equal(pressure.quality, 1, 'Uncertain status carried as quality 1');
      assert.equal((await admin.post(`/api/v1/connections/${id}/stop`)).status, 202);
      await waitUntil('session closed', () => (device.sessions() === sessionsBefore ? true : null));
    });

    it('a wrong password ends in error with a readable lastError, without endless retries', async () => {
      const id = await connection('Wrong password', {
        username: OPCUA_USER,
        password: 'not-the-password-123',
      });
      await admin.post(`/api/v1/connections/${id}/start`);
      const state = await waitUntil('error', async () => {
        const r = await runtime(id);
        return r.state === 'error' ? r : null;
      });
      assert.match(state.lastError, /refused the identity of user operator/);
      assert.ok(!JSON.stringify(state).includes('not-the-password-123'));
      await new Promise((resolve) => setTimeout(resolve, 1000));
      const history = await admin.get(`/api/v1/connections/state-history?connectionId=${id}`);
      const transitions = history.body.data
        .map((e: { to: string; reason: string }) => `${e.to}:${e.reason}`)
        .reverse();
      assert.deepEqual(transitions, ['connecting:user_start', 'error:auth_failed']);
      assert.equal((await runtime(id)).state, 'error');
    });
  });
}
