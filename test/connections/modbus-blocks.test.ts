import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { encodeRegisters } from '../../src/modules/connections/drivers/modbus/modbus-registers.js';
import { testDialects } from '../helpers/dialects.js';
import { freePort } from '../helpers/free-port.js';
import type { TestClient } from '../helpers/http-client.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';
import { waitUntil } from '../helpers/wait.js';
import { ModbusTestServer } from './modbus-test-server.js';

/**
 * Modbus register quantities and block reads against modbus-serial's ServerTCP, which counts the
 * requests it receives (Modbus TCP frames on its socket) and refuses chosen addresses with exception 2.
 */
for (const dialect of testDialects()) {
  describe(`Modbus block reads against modbus-serial's ServerTCP [${dialect}]`, () => {
    let server: TestServer;
    let admin: TestClient;
    let device: ModbusTestServer;

    before(async () => {
      device = new ModbusTestServer(await freePort());
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

    let connections = 0;
    /** A connection to the device with `config` over the defaults; its functions created before it starts. */
    const connection = async (config: Record<string, unknown> = {}) => {
      const res = await admin.post('/api/v1/connections', {
        name: `Line ${++connections}`,
        protocol: 'modbus-tcp',
        config: { host: '127.0.0.1', port: device.port, unitId: 1, timeoutMs: 2000, ...config },
      });
      assert.equal(res.status, 201, res.text);
      return `/api/v1/connections/${res.body.data.id}`;
    };
    const createFunction = async (path: string, body: Record<string, unknown>) => {
      const res = await admin.post(`${path}/functions`, body);
      assert.equal(res.status, 201, res.text);
      return res.body.data.id as string;
    };
    /** Polled holding-register functions, one a register from `addresses`, each into `<topic>/<address>`. */
    const polled = async (path: string, addresses: number[], topic: string, intervalMs = 200) => {
      for (let i = 0; i < addresses.length; i += 10) {
        await Promise.all(
          addresses.slice(i, i + 10).map((address) =>
            createFunction(path, {
              name: `r${address}`,
              type: 'modbus.readHoldingRegisters',
              config: { address },
              uns: { topic: `${topic}/r${address}`, intervalMs },
            }),
          ),
        );
      }
    };
    /** The latest values under `topic`, by topic. */
    const latest = async (topic: string) => {
      const res = await admin.get(`/api/v1/uns/data/latest?filter=${topic}/%23&limit=500`);
      assert.equal(res.status, 200, res.text);
      return new Map<string, unknown>(
        res.body.data.map((v: { topic: string; value: unknown }) => [v.topic, v.value]),
      );
    };
    /** The FC03 requests the device received from now on within [from, to). */
    const readsFrom = (from: number, to: number) => {
      const start = device.reads.length;
      return () => device.reads.slice(start).filter((r) => r.fc === 3 && r.address >= from && r.address < to);
    };
    const start = async (path: string) => {
      assert.equal((await admin.post(`${path}/start`)).status, 202);
    };
    const stop = async (path: string) => {
      assert.equal((await admin.post(`${path}/stop`)).status, 202);
    };

    it('reads quantity values of a data type as an array, scale and offset applied to each', async () => {
      const path = await connection();
      [-100, 250, 31000].forEach((raw, i) => {
        device.holding[10 + i] = encodeRegisters(raw, 'int16', 'ABCD')[0]!;
      });
      const ints = await createFunction(path, {
        name: 'ints',
        type: 'modbus.readHoldingRegisters',
        config: { address: 10, quantity: 3, dataType: 'int16', scale: 0.1, offset: 5 },
      });
      const res = await admin.post(`${path}/functions/${ints}/execute`, {});
      assert.equal(res.status, 200, res.text);
      assert.equal(res.body.data.success, true, res.text);
      const value = res.body.data.value as number[];
      assert.equal(value.length, 3);
      [-100, 250, 31000].forEach((raw, i) => {
        assert.ok(Math.abs(value[i]! - (raw * 0.1 + 5)) < 1e-9, `${i}: ${value[i]}`);
      });

      [1.5, -2.25].forEach((v, i) => {
        const words = encodeRegisters(v, 'float32', 'CDAB');
        device.input[20 + 2 * i] = words[0]!;
        device.input[21 + 2 * i] = words[1]!;
      });
      const floats = await createFunction(path, {
        name: 'floats',
        type: 'modbus.readInputRegisters',
        config: { address: 20, quantity: 2, dataType: 'float32', byteOrder: 'CDAB', scale: 2 },
        uns: { topic: 'v1/quantity/floats', intervalMs: 200 },
      });
      const executed = await admin.post(`${path}/functions/${floats}/execute`, {});
      assert.deepEqual(executed.body.data.value, [3, -4.5]);

      // Polled, the array reaches the UNS wrapped in an object (the UNS takes no bare arrays).
      await start(path);
      const published = await waitUntil('the polled array in the UNS', async () => {
        const r = await admin.get('/api/v1/uns/data/latest?topic=v1/quantity/floats');
        return r.body.data?.value ?? null;
      });
      assert.deepEqual(published, { values: [3, -4.5] });
      await stop(path);
    });

    describe('a quantity that does not fit one request: 400 naming config.quantity, nothing stored', () => {
      const cases: [string, Record<string, unknown>, string, RegExp][] = [
        ['zero', { address: 0, quantity: 0 }, 'modbus.readHoldingRegisters', /config\.quantity must be >= 1/],
        [
          'more than 125 registers',
          { address: 0, quantity: 126 },
          'modbus.readInputRegisters',
          /config\.quantity must be <= 125/,
        ],
        [
          '32 float64 values (128 registers)',
          { address: 0, quantity: 32, dataType: 'float64' },
          'modbus.readHoldingRegisters',
          /config\.quantity: 32 values of float64 are 128 registers; one request reads at most 125 \(at most 31 values of float64\)/,
        ],
        [
          'past the last address',
          { address: 65530, quantity: 4, dataType: 'int32' },
          'modbus.readHoldingRegisters',
          /config\.quantity: 8 registers from config\.address 65530 run past the last address, 65535/,
        ],
        [
          'more than 2000 bits',
          { address: 0, quantity: 2001 },
          'modbus.readCoils',
          /config\.quantity must be <= 2000/,
        ],
        [
          'not an integer',
          { address: 0, quantity: 1.5 },
          'modbus.readHoldingRegisters',
          /config\.quantity must be integer/,
        ],
      ];
      let path: string;
      before(async () => {
        path = await connection();
      });
      for (const [what, config, type, message] of cases) {
        it(what, async () => {
          const res = await admin.post(`${path}/functions`, { name: 'q', type, config });
          assert.equal(res.status, 400, res.text);
          assert.equal(res.body.error, 'bad_request');
          assert.match(res.body.message, message);
          assert.equal((await admin.get(`${path}/functions`)).body.pagination.total, 0);
        });
      }

      it('a quantity given by a ((parameter)) is checked when it runs', async () => {
        const id = await createFunction(path, {
          name: 'by-parameter',
          type: 'modbus.readHoldingRegisters',
          config: { address: 0, quantity: '((n))', dataType: 'float64' },
          parameters: [{ name: 'n', type: 'integer' }],
        });
        const res = await admin.post(`${path}/functions/${id}/execute`, { parameters: { n: 40 } });
        assert.equal(res.status, 400, res.text);
        assert.match(res.body.message, /config\.quantity: 40 values of float64 are 160 registers/);
        const ok = await admin.post(`${path}/functions/${id}/execute`, { parameters: { n: 2 } });
        assert.equal(ok.body.data.success, true, ok.text);
        assert.equal(ok.body.data.value.length, 2);
      });
    });

    it('polls 10 adjacent registers in one request a cycle, each value into its own topic', async () => {
      const path = await connection();
      const addresses = Array.from({ length: 10 }, (_, i) => 100 + i);
      for (const a of addresses) device.holding[a] = a * 3;
      await polled(path, addresses, 'v1/block/ten');
      const reads = readsFrom(100, 110);
      await start(path);
      await waitUntil('the 10 values in the UNS', async () => {
        const values = await latest('v1/block/ten');
        return addresses.every((a) => values.get(`v1/block/ten/r${a}`) === a * 3) ? true : null;
      });
      await waitUntil('three polls more', () => (reads().length >= 3 ? true : null));
      await stop(path);
      assert.ok(reads().length >= 3);
      for (const read of reads()) assert.deepEqual(read, { fc: 3, address: 100, length: 10 });
    });

    it('polls coils in one request a cycle, a quantity of them as an array beside single ones', async () => {
      const path = await connection();
      [true, false, true, true, false].forEach((bit, i) => {
        device.coils[40 + i] = bit;
      });
      await createFunction(path, {
        name: 'c40',
        type: 'modbus.readCoils',
        config: { address: 40 },
        uns: { topic: 'v1/coils/c40', intervalMs: 200 },
      });
      await createFunction(path, {
        name: 'c41-43',
        type: 'modbus.readCoils',
        config: { address: 41, quantity: 3 },
        uns: { topic: 'v1/coils/c41', intervalMs: 200 },
      });
      await createFunction(path, {
        name: 'c44',
        type: 'modbus.readCoils',
        config: { address: 44 },
        uns: { topic: 'v1/coils/c44', intervalMs: 200 },
      });
      const start0 = device.reads.length;
      const coilReads = () =>
        device.reads.slice(start0).filter((r) => r.fc === 1 && r.address >= 40 && r.address < 45);
      await start(path);
      await waitUntil('the coil values', async () => {
        const values = await latest('v1/coils');
        return values.get('v1/coils/c40') === true &&
          JSON.stringify(values.get('v1/coils/c41')) === JSON.stringify({ values: [false, true, true] }) &&
          values.get('v1/coils/c44') === false
          ? true
          : null;
      });
      await waitUntil('three polls', () => (coilReads().length >= 3 ? true : null));
      await stop(path);
      for (const read of coilReads()) assert.deepEqual(read, { fc: 1, address: 40, length: 5 });
    });

    it('reads across a gap up to blockGap (default 16) in one request, a wider gap in two', async () => {
      const wide = await connection();
      // 17 unread registers between 200 and 218: more than the default gap.
      device.holding[200] = 1;
      device.holding[218] = 2;
      await polled(wide, [200, 218], 'v1/gap/wide');
      const wideReads = readsFrom(200, 219);
      await start(wide);
      await waitUntil('both values', async () => ((await latest('v1/gap/wide')).size === 2 ? true : null));
      await waitUntil('three polls more', () => (wideReads().length >= 6 ? true : null));
      await stop(wide);
      const wideSeen = wideReads();
      assert.deepEqual(new Set(wideSeen.map((r) => `${r.address}+${r.length}`)), new Set(['200+1', '218+1']));

      const spanning = await connection({ blockGap: 17 });
      await polled(spanning, [200, 218], 'v1/gap/spanning');
      const spanningReads = readsFrom(200, 219);
      await start(spanning);
      await waitUntil('both values', async () => {
        const values = await latest('v1/gap/spanning');
        return values.get('v1/gap/spanning/r200') === 1 && values.get('v1/gap/spanning/r218') === 2
          ? true
          : null;
      });
      await waitUntil('three polls more', () => (spanningReads().length >= 3 ? true : null));
      await stop(spanning);
      for (const read of spanningReads()) assert.deepEqual(read, { fc: 3, address: 200, length: 19 });
    });

    it('isolates one address the device refuses among 100: the other 99 keep polling, the split is kept and retried', async () => {
      const path = await connection({ blockRetryMs: 1000 });
      const addresses = Array.from({ length: 100 }, (_, i) => 800 + i);
      for (const a of addresses) device.holding[a] = a - 700;
      device.illegal.add(850);
      await polled(path, addresses, 'v1/fallback');
      const reads = readsFrom(800, 900);
      await start(path);
      const good = addresses.filter((a) => a !== 850);
      await waitUntil('the 99 values in the UNS', async () => {
        const values = await latest('v1/fallback');
        return good.every((a) => values.get(`v1/fallback/r${a}`) === a - 700) ? values : null;
      });
      assert.equal(
        (await latest('v1/fallback')).has('v1/fallback/r850'),
        false,
        'the refused register has no value',
      );
      const runtime = (await admin.get(`${path}/runtime`)).body.data;
      assert.ok(runtime.metrics.errors > 0, 'each refused request counts as an error');

      // Split: the refused register is read alone, and a poll is 8 requests (the halves that read
      // well and the refused one), not 100, and not the whole block again every poll: that is tried
      // once each blockRetryMs (15 requests: the whole, then bisecting down to the refused one).
      const steady = readsFrom(800, 900);
      const began = Date.now();
      await waitUntil('five polls of the refused register', () =>
        steady().filter((r) => r.address === 850 && r.length === 1).length >= 5 ? true : null,
      );
      const seen = steady();
      const elapsed = Date.now() - began;
      const polls = seen.filter((r) => r.address === 850 && r.length === 1).length;
      const wholes = seen.filter((r) => r.address === 800 && r.length === 100).length;
      assert.ok(
        wholes <= Math.ceil(elapsed / 1000) + 1,
        `the whole block tried ${wholes} times in ${elapsed} ms`,
      );
      assert.ok(seen.length <= polls * 8 + wholes * 7 + 8, `${seen.length} requests in ${polls} polls`);

      // Once the device maps the address, the next retry reads the whole block, and from then on one
      // request a poll reads all 100.
      device.illegal.delete(850);
      await waitUntil('the freed register polled', async () =>
        (await latest('v1/fallback')).get('v1/fallback/r850') === 150 ? true : null,
      );
      const retried = readsFrom(800, 900);
      await waitUntil('the whole block read again', () =>
        retried().some((r) => r.address === 800 && r.length === 100) ? true : null,
      );
      const merged = readsFrom(800, 900);
      await waitUntil('three polls more', () => (merged().length >= 3 ? true : null));
      await stop(path);
      for (const read of merged()) assert.deepEqual(read, { fc: 3, address: 800, length: 100 });
      assert.ok(
        reads().some((r) => r.address === 850 && r.length === 1),
        'the refused register was read alone',
      );
    });
  });
}
