import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { encodeRegisters } from '../../src/modules/connections/drivers/modbus/modbus-registers.js';
import { testDialects } from '../helpers/dialects.js';
import { freePort } from '../helpers/free-port.js';
import type { TestClient } from '../helpers/http-client.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';
import { waitUntil } from '../helpers/wait.js';
import { ModbusTestServer } from './modbus-test-server.js';

for (const dialect of testDialects()) {
  describe(`Modbus TCP against modbus-serial's ServerTCP [${dialect}]`, () => {
    let server: TestServer;
    let admin: TestClient;
    let device: ModbusTestServer;
    let connectionId: string;
    const path = () => `/api/v1/connections/${connectionId}`;

    before(async () => {
      device = new ModbusTestServer(await freePort());
      await device.start();
      server = await startTestServer(dialect, {
        connectionRuntime: { tickMs: 200, leaseMs: 2000, reconnectBaseMs: 200 },
      });
      admin = server.admin;
      const res = await admin.post('/api/v1/connections', {
        name: 'Press line',
        protocol: 'modbus-tcp',
        config: { host: '127.0.0.1', port: device.port, unitId: 1, timeoutMs: 1000 },
      });
      assert.equal(res.status, 201, res.text);
      connectionId = res.body.data.id;
    });
    after(async () => {
      await server?.close();
      await device?.stop();
    });

    const createFunction = async (body: Record<string, unknown>) => {
      const res = await admin.post(`${path()}/functions`, body);
      assert.equal(res.status, 201, res.text);
      return res.body.data.id as string;
    };
    const execute = (id: string, body: Record<string, unknown> = {}) =>
      admin.post(`${path()}/functions/${id}/execute`, body);

    it('reads every data type in every byte order, with scale and offset, through a ((parameter))', async () => {
      const id = await createFunction({
        name: 'register',
        type: 'modbus.readHoldingRegisters',
        config: {
          address: '((start))',
          dataType: '((dataType))',
          byteOrder: '((order))',
          scale: 0.5,
          offset: 10,
        },
        parameters: [
          { name: 'start', type: 'integer', min: 0 },
          { name: 'dataType', type: 'string' },
          { name: 'order', type: 'string', default: 'ABCD' },
        ],
      });
      const cases: [string, number][] = [
        ['int16', -1234],
        ['uint16', 54321],
        ['int32', -7654321],
        ['uint32', 3_000_000_000],
        ['float32', 12.5],
        ['float64', -98765.4321],
      ];
      for (const [dataType, raw] of cases) {
        for (const order of ['ABCD', 'CDAB', 'BADC', 'DCBA'] as const) {
          const words = encodeRegisters(raw, dataType as 'int16', order);
          words.forEach((w, i) => {
            device.holding[100 + i] = w;
          });
          const res = await execute(id, { parameters: { start: 100, dataType, order } });
          assert.equal(res.status, 200, res.text);
          assert.equal(res.body.data.success, true, res.text);
          assert.equal(res.body.data.quality, 0);
          assert.ok(
            Math.abs(res.body.data.value - (raw * 0.5 + 10)) < 1e-3,
            `${dataType} ${order}: ${res.body.data.value}`,
          );
          assert.equal(typeof res.body.data.durationMs, 'number');
          assert.ok(!Number.isNaN(Date.parse(res.body.data.timestamp)));
        }
      }
    });

    it('decodes CDAB float32 from known register words', async () => {
      // 123.456 as IEEE 754 is 0x42F6E979: CDAB sends the low word first.
      device.input[7] = 0xe979;
      device.input[8] = 0x42f6;
      const id = await createFunction({
        name: 'flow',
        type: 'modbus.readInputRegisters',
        config: { address: 7, dataType: 'float32', byteOrder: 'CDAB' },
      });
      const res = await execute(id);
      assert.ok(Math.abs(res.body.data.value - 123.456) < 1e-4, String(res.body.data.value));
    });

    it('reads coils and discrete inputs', async () => {
      device.coils[3] = true;
      device.discrete[4] = true;
      device.discrete[5] = false;
      const coil = await createFunction({ name: 'coil', type: 'modbus.readCoils', config: { address: 3 } });
      const inputs = await createFunction({
        name: 'inputs',
        type: 'modbus.readDiscreteInputs',
        config: { address: 4, quantity: 2 },
      });
      assert.equal((await execute(coil)).body.data.value, true);
      assert.deepEqual((await execute(inputs)).body.data.value, [true, false]);
    });

    it('writes a register and a coil only with confirmWrites; the device changes', async () => {
      const setpoint = await createFunction({
        name: 'setpoint',
        type: 'modbus.writeRegisters',
        config: { address: 200, dataType: 'int32', byteOrder: 'CDAB', scale: 0.1, value: '((value))' },
        parameters: [{ name: 'value', type: 'number' }],
      });
      const refused = await execute(setpoint, { parameters: { value: 42.5 } });
      assert.equal(refused.status, 400);
      assert.match(refused.body.message, /confirmWrites must be true/);
      assert.equal(device.holding[200], 0);
      const ok = await execute(setpoint, { parameters: { value: 42.5 }, confirmWrites: true });
      assert.equal(ok.status, 200, ok.text);
      assert.equal(ok.body.data.success, true);
      assert.deepEqual([device.holding[200], device.holding[201]], encodeRegisters(425, 'int32', 'CDAB'));
      const coil = await createFunction({
        name: 'pump',
        type: 'modbus.writeCoil',
        config: { address: 9, value: true },
      });
      assert.equal((await execute(coil, { confirmWrites: true })).body.data.success, true);
      assert.equal(device.coils[9], true);
    });

    it('refuses every write on a read-only connection (409) and still reads', async () => {
      const ro = await admin.post('/api/v1/connections', {
        name: 'Read only',
        protocol: 'modbus-tcp',
        readOnly: true,
        config: { host: '127.0.0.1', port: device.port },
      });
      const fn = await admin.post(`/api/v1/connections/${ro.body.data.id}/functions`, {
        name: 'w',
        type: 'modbus.writeCoil',
        config: { address: 11, value: true },
      });
      const res = await admin.post(
        `/api/v1/connections/${ro.body.data.id}/functions/${fn.body.data.id}/execute`,
        { confirmWrites: true },
      );
      assert.equal(res.status, 409);
      assert.equal(res.body.error, 'conflict');
      assert.match(res.body.message, /read-only/);
      assert.equal(device.coils[11], false);
      const r = await admin.post(`/api/v1/connections/${ro.body.data.id}/functions`, {
        name: 'r',
        type: 'modbus.readCoils',
        config: { address: 11 },
      });
      const read = await admin.post(
        `/api/v1/connections/${ro.body.data.id}/functions/${r.body.data.id}/execute`,
        {},
      );
      assert.equal(read.body.data.success, true);
    });

    describe('bad function input: a clear error, nothing stored', () => {
      const cases: [string, Record<string, unknown>, RegExp][] = [
        [
          'undeclared placeholder',
          { name: 'b1', type: 'modbus.readCoils', config: { address: '((foo))' } },
          /config\.address uses the placeholder \(\(foo\)\), which parameters does not declare/,
        ],
        [
          'unused declaration',
          {
            name: 'b2',
            type: 'modbus.readCoils',
            config: { address: 1 },
            parameters: [{ name: 'x', type: 'integer' }],
          },
          /parameters\[0\]\.name 'x' is not used/,
        ],
        [
          'unknown type',
          { name: 'b3', type: 'opcua.read', config: {} },
          /type 'opcua\.read' is not a function type of modbus-tcp/,
        ],
        [
          'config of the wrong type',
          { name: 'b4', type: 'modbus.readCoils', config: { address: 'ten' } },
          /config\.address must be integer/,
        ],
        [
          'a placeholder whose type does not fit',
          {
            name: 'b5',
            type: 'modbus.readCoils',
            config: { address: '((a))' },
            parameters: [{ name: 'a', type: 'string' }],
          },
          /config\.address must be integer/,
        ],
        [
          'missing required config',
          { name: 'b6', type: 'modbus.writeCoil', config: { address: 1 } },
          /config\.value is required/,
        ],
        [
          'uns on a write',
          {
            name: 'b7',
            type: 'modbus.writeCoil',
            config: { address: 1, value: true },
            uns: { topic: 'v1/a/b', intervalMs: 1000 },
          },
          /uns is only for read/,
        ],
        [
          'uns topic without prefix',
          {
            name: 'b8',
            type: 'modbus.readCoils',
            config: { address: 1 },
            uns: { topic: 'plant/a/b', intervalMs: 1000 },
          },
          /uns\.topic/,
        ],
      ];
      for (const [what, body, message] of cases) {
        it(what, async () => {
          const before = (await admin.get(`${path()}/functions`)).body.pagination.total;
          const res = await admin.post(`${path()}/functions`, body);
          assert.equal(res.status, 400, res.text);
          assert.equal(res.body.error, 'bad_request');
          assert.match(res.body.message, message);
          assert.equal((await admin.get(`${path()}/functions`)).body.pagination.total, before);
        });
      }

      it('execute: a missing or mistyped parameter is 400', async () => {
        const id = await createFunction({
          name: 'p1',
          type: 'modbus.readCoils',
          config: { address: '((a))' },
          parameters: [{ name: 'a', type: 'integer', max: 100 }],
        });
        assert.match((await execute(id)).body.message, /parameters\.a is required/);
        assert.match(
          (await execute(id, { parameters: { a: '1' } })).body.message,
          /parameters\.a must be integer/,
        );
        assert.match(
          (await execute(id, { parameters: { a: 101 } })).body.message,
          /parameters\.a must be <= 100/,
        );
        assert.match(
          (await execute(id, { parameters: { a: 1, b: 2 } })).body.message,
          /parameters\.b is not a parameter/,
        );
      });
    });

    it('imports functions from CSV all or nothing, naming the bad row', async () => {
      const rows = ['name,type,description,config,parameters'];
      for (let i = 1; i <= 50; i++) {
        const config = i === 17 ? '{"address":"((nope))"}' : `{"address":${i}}`;
        rows.push(`csv-${i},modbus.readCoils,coil ${i},"${config.replace(/"/g, '""')}",[]`);
      }
      const before = (await admin.get(`${path()}/functions`)).body.pagination.total;
      const bad = await admin.post(`${path()}/functions/import`, { csv: rows.join('\n') });
      assert.equal(bad.status, 400, bad.text);
      assert.match(bad.body.message, /row 17: config\.address uses the placeholder \(\(nope\)\)/);
      assert.equal((await admin.get(`${path()}/functions`)).body.pagination.total, before);
      rows[17] = 'csv-17,modbus.readCoils,coil 17,"{""address"":17}",[]';
      const ok = await admin.post(`${path()}/functions/import`, { csv: rows.join('\n') });
      assert.equal(ok.status, 201, ok.text);
      assert.equal(ok.body.data.length, 50);
      assert.equal((await admin.get(`${path()}/functions`)).body.pagination.total, before + 50);
    });

    it('runs: polls a read function into the UNS with quality, survives the device restarting', async () => {
      device.holding[300] = 777;
      await createFunction({
        name: 'polled',
        type: 'modbus.readHoldingRegisters',
        config: { address: 300 },
        uns: { topic: 'v1/plant/press/pressure', intervalMs: 100 },
      });
      const started = await admin.post(`${path()}/start`);
      assert.equal(started.status, 202, started.text);
      assert.equal(started.body.data.desiredState, 'running');
      await waitUntil('connected', async () =>
        (await admin.get(`${path()}/runtime`)).body.data.state === 'connected' ? true : null,
      );
      const latest = await waitUntil('the polled value in the UNS', async () => {
        const res = await admin.get('/api/v1/uns/data/latest?topic=v1/plant/press/pressure');
        return res.status === 200 && res.body.data?.value === 777 ? res.body.data : null;
      });
      assert.equal(latest.quality, 0);
      const again = await admin.post(`${path()}/start`);
      assert.equal(again.status, 202);
      assert.equal(device.sessions(), 1, 'one session on the device after starting twice');

      let unhandled: unknown;
      const onUnhandled = (reason: unknown) => {
        unhandled = reason;
      };
      process.on('unhandledRejection', onUnhandled);
      try {
        await device.stop();
        await waitUntil('reconnecting', async () =>
          (await admin.get(`${path()}/runtime`)).body.data.state === 'reconnecting' ? true : null,
        );
        await device.start();
        device.holding[300] = 778;
        await waitUntil('connected again', async () =>
          (await admin.get(`${path()}/runtime`)).body.data.state === 'connected' ? true : null,
        );
        await waitUntil('the new value', async () => {
          const res = await admin.get('/api/v1/uns/data/latest?topic=v1/plant/press/pressure');
          return res.body.data?.value === 778 ? true : null;
        });
      } finally {
        process.off('unhandledRejection', onUnhandled);
      }
      assert.equal(unhandled, undefined);
      const runtime = (await admin.get(`${path()}/runtime`)).body.data;
      assert.ok(runtime.metrics.reconnects >= 1, JSON.stringify(runtime.metrics));
      assert.ok(runtime.metrics.valuesPublished >= 2);
      assert.ok(runtime.metrics.latencyMs.p50 !== null);
      const history = await admin.get(
        `/api/v1/connections/state-history?connectionId=${connectionId}&limit=500`,
      );
      const transitions = history.body.data.map((e: { to: string }) => e.to).reverse();
      const firstReconnecting = transitions.indexOf('reconnecting');
      assert.ok(firstReconnecting > 0, transitions.join(','));
      assert.ok(
        transitions.indexOf('connected', firstReconnecting) > firstReconnecting,
        transitions.join(','),
      );
      assert.deepEqual(transitions.slice(0, 2), ['connecting', 'connected']);
      const alias = await admin.get(`${path()}/state-history?limit=500`);
      assert.deepEqual(
        alias.body.data,
        history.body.data,
        '/connections/{id}/state-history is the same list',
      );
      const summary = await admin.get(
        `/api/v1/connections/state-history/summary?window=1h&connectionId=${connectionId}`,
      );
      assert.equal(summary.status, 200, summary.text);
      const health = summary.body.data.connections[0];
      assert.equal(health.failures, 1);
      assert.ok(health.uptimePct > 0 && health.uptimePct < 100, String(health.uptimePct));
      assert.equal(health.currentState, 'connected');

      const metrics = await server.client.get('/metrics');
      assert.match(
        metrics.text,
        new RegExp(`meridian_connection_up\\{[^}]*connection="${connectionId}"[^}]*\\} 1`),
      );

      // Saving the settings it runs with is no change: the session is left alone. Another setting
      // restarts it (the state history records each stop with its reason; a restart for another reason,
      // a lease on a loaded machine, does not count here).
      const restarts = async () =>
        (
          await admin.get(`/api/v1/connections/state-history?connectionId=${connectionId}&limit=500`)
        ).body.data.filter((e: { reason: string }) => e.reason === 'config_changed').length;
      const restartsBefore = await restarts();
      const { version } = (await admin.get(path())).body.data;
      const config = { host: '127.0.0.1', port: device.port, unitId: 1, timeoutMs: 1000 };
      const same = await admin.patch(path(), { name: 'Press line', config });
      assert.equal(same.status, 200, same.text);
      assert.equal(same.body.data.version, version);
      // A restart is recorded within milliseconds of a save that causes one: half a second shows none.
      await new Promise((resolve) => setTimeout(resolve, 500));
      assert.equal(await restarts(), restartsBefore);
      const changed = await admin.patch(path(), { config: { ...config, timeoutMs: 1500 } });
      assert.equal(changed.body.data.version, version + 1);
      await waitUntil('restarted with the new settings', async () =>
        (await restarts()) > restartsBefore ? true : null,
      );
      await waitUntil('connected with them', async () =>
        (await admin.get(`${path()}/runtime`)).body.data.state === 'connected' ? true : null,
      );

      const stopped = await admin.post(`${path()}/stop`);
      assert.equal(stopped.status, 202);
      assert.equal(stopped.body.data.state, 'idle');
      await waitUntil('the session closed', () => (device.sessions() === 0 ? true : null));
      assert.equal((await admin.post(`${path()}/stop`)).status, 202, 'stop is idempotent');
    });
  });
}
