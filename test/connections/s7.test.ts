import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { testDialects } from '../helpers/dialects.js';
import { freePort } from '../helpers/free-port.js';
import { type S7Plc, startS7Plc } from '../helpers/s7-plc.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';
import { waitUntil } from '../helpers/wait.js';

for (const dialect of testDialects()) {
  describe(`Siemens S7 (nodes7) against node-snap7's server [${dialect}]`, () => {
    let server: TestServer;
    let plc: S7Plc;
    let port: number;

    before(async () => {
      port = await freePort();
      const db1 = Buffer.alloc(64);
      db1.writeFloatBE(21.75, 0);
      db1.writeInt16BE(-12, 4);
      plc = await startS7Plc(port, db1);
      server = await startTestServer(dialect, {
        connectionRuntime: { tickMs: 200, leaseMs: 2000, reconnectBaseMs: 200 },
      });
    });
    after(async () => {
      await server?.close();
      await plc?.kill();
    });

    it('reads REAL and INT from a data block and writes only when confirmed', async () => {
      const created = await server.admin.post('/api/v1/connections', {
        name: 'S7-1500',
        protocol: 's7',
        config: { host: '127.0.0.1', port, rack: 0, slot: 1, timeoutMs: 3000 },
      });
      assert.equal(created.status, 201, created.text);
      const id = created.body.data.id;
      const read = await server.admin.post(`/api/v1/connections/${id}/functions`, {
        name: 'read',
        type: 's7.read',
        config: { address: '((address))' },
        parameters: [{ name: 'address', type: 'string' }],
      });
      const execute = (fn: string, body: Record<string, unknown>) =>
        server.admin.post(`/api/v1/connections/${id}/functions/${fn}/execute`, body);
      const real = await execute(read.body.data.id, { parameters: { address: 'DB1,REAL0' } });
      assert.equal(real.body.data.success, true, real.text);
      assert.equal(real.body.data.value, 21.75);
      assert.equal(
        (await execute(read.body.data.id, { parameters: { address: 'DB1,INT4' } })).body.data.value,
        -12,
      );
      const write = await server.admin.post(`/api/v1/connections/${id}/functions`, {
        name: 'write',
        type: 's7.write',
        config: { address: 'DB1,INT4', value: '((v))' },
        parameters: [{ name: 'v', type: 'integer' }],
      });
      assert.equal((await execute(write.body.data.id, { parameters: { v: 321 } })).status, 400);
      assert.equal((await plc.db1()).readInt16BE(4), -12);
      const written = await execute(write.body.data.id, { parameters: { v: 321 }, confirmWrites: true });
      assert.equal(written.body.data.success, true, written.text);
      assert.equal((await plc.db1()).readInt16BE(4), 321);
    });

    it('goes reconnecting when the PLC stops, with nothing polling, and connected when it is back', async () => {
      const created = await server.admin.post('/api/v1/connections', {
        name: 'S7 lost link',
        protocol: 's7',
        config: { host: '127.0.0.1', port, rack: 0, slot: 1, timeoutMs: 2000 },
      });
      assert.equal(created.status, 201, created.text);
      const id = created.body.data.id as string;
      // No polled function: only the session itself can tell that the PLC went away.
      const read = await server.admin.post(`/api/v1/connections/${id}/functions`, {
        name: 'temperature',
        type: 's7.read',
        config: { address: 'DB1,REAL0' },
      });
      assert.equal(read.status, 201, read.text);
      const state = async () => (await server.admin.get(`/api/v1/connections/${id}/runtime`)).body.data.state;
      let unhandled: unknown;
      const onUnhandled = (reason: unknown) => {
        unhandled = reason;
      };
      process.on('unhandledRejection', onUnhandled);
      try {
        assert.equal((await server.admin.post(`/api/v1/connections/${id}/start`)).status, 202);
        await waitUntil('connected', async () => ((await state()) === 'connected' ? true : null));
        const db1 = await plc.db1();
        await plc.kill();
        await waitUntil('reconnecting', async () => ((await state()) === 'reconnecting' ? true : null));
        db1.writeFloatBE(22.5, 0);
        plc = await startS7Plc(port, db1);
        await waitUntil('connected again', async () => ((await state()) === 'connected' ? true : null));
        const value = await server.admin.post(
          `/api/v1/connections/${id}/functions/${read.body.data.id}/execute`,
          {},
        );
        assert.equal(value.body.data.success, true, value.text);
        assert.equal(value.body.data.value, 22.5);
      } finally {
        process.off('unhandledRejection', onUnhandled);
      }
      assert.equal(unhandled, undefined);
      const history = await server.admin.get(`/api/v1/connections/${id}/state-history?limit=500`);
      const transitions = history.body.data.map((e: { to: string }) => e.to).reverse() as string[];
      const reconnecting = transitions.indexOf('reconnecting');
      assert.ok(reconnecting > transitions.indexOf('connected'), transitions.join(','));
      assert.ok(transitions.indexOf('connected', reconnecting) > reconnecting, transitions.join(','));
      const runtime = (await server.admin.get(`/api/v1/connections/${id}/runtime`)).body.data;
      assert.ok(runtime.metrics.reconnects >= 1, JSON.stringify(runtime.metrics));
      assert.equal((await server.admin.post(`/api/v1/connections/${id}/stop`)).status, 202);
    });

    it('polls the reads of one interval in one request; an address the PLC lacks is read apart, the others keep their values', async () => {
      const admin = server.admin;
      const created = await admin.post('/api/v1/connections', {
        name: 'S7 batch',
        protocol: 's7',
        config: { host: '127.0.0.1', port, rack: 0, slot: 1, timeoutMs: 3000 },
      });
      assert.equal(created.status, 201, created.text);
      const path = `/api/v1/connections/${created.body.data.id}`;
      const addresses = ['DB1,REAL0', 'DB1,INT4', 'DB1,INT6', 'DB9,INT0'];
      for (const [i, address] of addresses.entries()) {
        const fn = await admin.post(`${path}/functions`, {
          name: `v${i}`,
          type: 's7.read',
          config: { address },
          uns: { topic: `v1/s7batch/v${i}`, intervalMs: 200 },
        });
        assert.equal(fn.status, 201, fn.text);
      }
      assert.equal((await admin.post(`${path}/start`)).status, 202);
      const db1 = await plc.db1();
      await waitUntil('the three values in the UNS', async () => {
        const res = await admin.get('/api/v1/uns/data/latest?filter=v1/s7batch/%2B');
        const values = new Map(
          res.body.data.map((v: { topic: string; value: unknown }) => [v.topic, v.value]),
        );
        return values.get('v1/s7batch/v0') === db1.readFloatBE(0) &&
          values.get('v1/s7batch/v1') === db1.readInt16BE(4) &&
          values.get('v1/s7batch/v2') === db1.readInt16BE(6)
          ? true
          : null;
      });
      const latestBad = await admin.get('/api/v1/uns/data/latest?filter=v1/s7batch/%2B');
      assert.equal(
        latestBad.body.data.some((v: { topic: string }) => v.topic === 'v1/s7batch/v3'),
        false,
        'DB9 does not exist: no value',
      );
      // From now on a poll is two requests (the three together, DB9 apart) for three values; read one
      // by one it would be four.
      const metrics = async () => (await admin.get(`${path}/runtime`)).body.data.metrics;
      const before = await metrics();
      const after = await waitUntil('15 values more', async () => {
        const m = await metrics();
        return m.valuesPublished >= before.valuesPublished + 15 ? m : null;
      });
      const requests = after.requests - before.requests;
      const values = after.valuesPublished - before.valuesPublished;
      assert.ok(requests * 3 <= values * 2 + 6, `${requests} requests for ${values} values`);
      assert.ok(after.errors > before.errors, 'DB9 still fails, alone');
      assert.equal((await admin.post(`${path}/stop`)).status, 202);
    });
  });
}
