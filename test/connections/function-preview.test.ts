import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { testDialects } from '../helpers/dialects.js';
import { signedInMember } from '../helpers/factories.js';
import { freePort } from '../helpers/free-port.js';
import type { TestClient } from '../helpers/http-client.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';
import { ModbusTestServer } from './modbus-test-server.js';

/**
 * `POST /connections/{id}/functions/preview`: a read config run once, not saved, against modbus-serial's
 * ServerTCP; write and subscribe types are refused before anything reaches the device.
 */
for (const dialect of testDialects()) {
  describe(`function preview against modbus-serial's ServerTCP [${dialect}]`, () => {
    let server: TestServer;
    let admin: TestClient;
    let device: ModbusTestServer;
    let path: string;
    const preview = (body: unknown, client = admin) => client.post(`${path}/functions/preview`, body);

    before(async () => {
      device = new ModbusTestServer(await freePort());
      await device.start();
      for (let i = 0; i < 10; i++) device.holding[100 + i] = 10 * (i + 1);
      device.holding[200] = 0x4148; // 12.5 as a float32, ABCD
      device.holding[201] = 0x0000;
      server = await startTestServer(dialect, {
        connectionRuntime: { tickMs: 200, leaseMs: 2000, reconnectBaseMs: 200 },
      });
      admin = server.admin;
      const res = await admin.post('/api/v1/connections', {
        name: 'Preview PLC',
        protocol: 'modbus-tcp',
        config: { host: '127.0.0.1', port: device.port, unitId: 1, timeoutMs: 2000 },
      });
      assert.equal(res.status, 201, res.text);
      path = `/api/v1/connections/${res.body.data.id}`;
    });
    after(async () => {
      await server?.close();
      await device?.stop();
    });

    it('reads a block of 10 registers in one request and saves nothing', async () => {
      const before = device.reads.length;
      const res = await preview({
        type: 'modbus.readHoldingRegisters',
        config: { address: 100, quantity: 10 },
      });
      assert.equal(res.status, 200, res.text);
      assert.equal(res.body.data.success, true, res.text);
      assert.deepEqual(res.body.data.value, [10, 20, 30, 40, 50, 60, 70, 80, 90, 100]);
      assert.deepEqual(device.reads.slice(before), [{ fc: 3, address: 100, length: 10 }]);
      const float = await preview({
        type: 'modbus.readHoldingRegisters',
        config: { address: 200, dataType: 'float32', byteOrder: 'ABCD' },
      });
      assert.equal(float.body.data.value, 12.5, float.text);
      const list = await admin.get(`${path}/functions`);
      assert.deepEqual(list.body.data, []);
    });

    it('refuses a write type with 400 and the device sees no request', async () => {
      const requests = device.requests;
      const res = await preview({ type: 'modbus.writeRegisters', config: { address: 100, value: 7 } });
      assert.equal(res.status, 400, res.text);
      assert.match(res.body.message, /a preview only reads; modbus.writeRegisters is a write function/);
      assert.equal(device.holding[100], 10);
      assert.equal(device.requests, requests);
    });

    it('400 naming the field for a bad config, an unknown type or a placeholder; 403 for a viewer', async () => {
      const bad = await preview({ type: 'modbus.readHoldingRegisters', config: { address: 70000 } });
      assert.equal(bad.status, 400, bad.text);
      assert.match(bad.body.message, /address/);
      const tooMany = await preview({
        type: 'modbus.readHoldingRegisters',
        config: { address: 0, quantity: 100, dataType: 'float32' },
      });
      assert.equal(tooMany.status, 400, tooMany.text);
      const unknown = await preview({ type: 'modbus.readEverything', config: {} });
      assert.equal(unknown.status, 400, unknown.text);
      assert.match(unknown.body.message, /not a function type of modbus-tcp/);
      const placeholder = await preview({
        type: 'modbus.readHoldingRegisters',
        config: { address: '((where))' },
      });
      assert.equal(placeholder.status, 400, placeholder.text);
      const extra = await preview({ type: 'modbus.readHoldingRegisters', config: { address: 1 }, name: 'x' });
      assert.equal(extra.status, 400, extra.text);
      const { client } = await signedInMember(server, 'Viewer');
      const refused = await preview({ type: 'modbus.readHoldingRegisters', config: { address: 1 } }, client);
      assert.equal(refused.status, 403, refused.text);
    });

    it('answers success false with the reason when the device refuses the address', async () => {
      device.illegal.add(300);
      const res = await preview({ type: 'modbus.readHoldingRegisters', config: { address: 300 } });
      assert.equal(res.status, 200, res.text);
      assert.equal(res.body.data.success, false);
      assert.ok(res.body.data.error, res.text);
    });
  });
}
