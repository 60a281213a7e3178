import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { createServer as createTcpServer, type Socket } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { testDialects } from '../helpers/dialects.js';
import { freePort } from '../helpers/free-port.js';
import type { TestClient } from '../helpers/http-client.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';
import { waitUntil } from '../helpers/wait.js';
import { ModbusTestServer } from './modbus-test-server.js';

const CONNECTIONS = '/api/v1/connections';

async function connection(api: TestClient, name: string, protocol: string, config: Record<string, unknown>) {
  const res = await api.post(CONNECTIONS, { name, protocol, config });
  assert.equal(res.status, 201, res.text);
  return res.body.data.id as string;
}

const runtimeOf = async (api: TestClient, id: string) =>
  (await api.get(`${CONNECTIONS}/${id}/runtime`)).body.data;

/** Waits until the connection's runtime meets `test`; answers it. */
const runtimeWhen = (api: TestClient, id: string, what: string, test: (r: any) => boolean) =>
  waitUntil(what, async () => {
    const r = await runtimeOf(api, id);
    return test(r) ? r : null;
  });

for (const dialect of testDialects()) {
  describe(`connection counters tell the truth [${dialect}]`, () => {
    let server: TestServer;
    let api: TestClient;
    let http: Server;
    let httpPort: number;

    before(async () => {
      server = await startTestServer(dialect, {
        connectionRuntime: { tickMs: 200, leaseMs: 2000, reconnectBaseMs: 100 },
      });
      api = server.admin;
      httpPort = await freePort();
      // HEAD answers (the REST session's probe); GET /bad fails with 500, GET /ok answers.
      http = createServer((req, res) => {
        if (req.url?.startsWith('/bad')) res.writeHead(500).end('{"error":"broken"}');
        else res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
      });
      await new Promise<void>((resolve) => http.listen(httpPort, '127.0.0.1', resolve));
    });
    after(async () => {
      await new Promise<void>((resolve) => http?.close(() => resolve()));
      await server?.close();
    });

    it('an unreachable port: every failed attempt counts in errors, every retry in reconnects, and the error says refused', async () => {
      const port = await freePort();
      const id = await connection(api, 'Refusing PLC', 'modbus-tcp', {
        host: '127.0.0.1',
        port,
        timeoutMs: 1000,
      });
      assert.equal((await api.post(`${CONNECTIONS}/${id}/start`, {})).status, 202);
      const failing = await runtimeWhen(
        api,
        id,
        'three attempts failed',
        (r) => r.metrics.errors >= 3 && r.lastError,
      );
      assert.match(failing.lastError, /^connection refused: .*127\.0\.0\.1/);
      assert.ok(failing.metrics.reconnects >= 2, JSON.stringify(failing.metrics));
      assert.ok(failing.metrics.reconnects >= failing.metrics.errors - 1, JSON.stringify(failing.metrics));
      // A device comes up on the port: the reconnect that succeeds is counted, the counters keep their history.
      const device = new ModbusTestServer(port);
      await device.start();
      try {
        const connected = await runtimeWhen(api, id, 'connected', (r) => r.state === 'connected');
        assert.ok(connected.metrics.reconnects >= failing.metrics.reconnects);
        assert.ok(connected.metrics.errors >= failing.metrics.errors);
      } finally {
        await api.post(`${CONNECTIONS}/${id}/stop`, {});
        await device.stop();
      }
    });

    it('a host that does not resolve says host not found', async () => {
      const id = await connection(api, 'Nowhere PLC', 'modbus-tcp', {
        host: 'no-such-plc.invalid',
        port: 502,
      });
      await api.post(`${CONNECTIONS}/${id}/start`, {});
      const r = await runtimeWhen(api, id, 'a failed attempt', (x) => x.metrics.errors >= 1 && x.lastError);
      assert.match(r.lastError, /^host not found: .*no-such-plc\.invalid/);
      await api.post(`${CONNECTIONS}/${id}/stop`, {});
    });

    it('a device that never answers says timed out and counts a time-out', async () => {
      const port = await freePort();
      const sockets = new Set<Socket>();
      const silent = createTcpServer((s) => {
        sockets.add(s);
        s.on('error', () => {});
      });
      await new Promise<void>((resolve) => silent.listen(port, '127.0.0.1', resolve));
      try {
        const id = await connection(api, 'Silent UA', 'opcua', {
          endpointUrl: `opc.tcp://127.0.0.1:${port}`,
          timeoutMs: 500,
        });
        await api.post(`${CONNECTIONS}/${id}/start`, {});
        const r = await runtimeWhen(
          api,
          id,
          'a timed-out attempt',
          (x) => x.metrics.timeouts >= 1 && x.lastError,
        );
        assert.match(r.lastError, /^timed out: /);
        assert.ok(r.metrics.errors >= r.metrics.timeouts);
        await api.post(`${CONNECTIONS}/${id}/stop`, {});
      } finally {
        for (const s of sockets) s.destroy();
        await new Promise<void>((resolve) => silent.close(() => resolve()));
      }
    });

    it('a failed poll counts in errors (and in requests); a good one only in requests', async () => {
      const id = await connection(api, 'Flaky API', 'rest', {
        baseUrl: `http://127.0.0.1:${httpPort}`,
        timeoutMs: 2000,
      });
      for (const [name, path] of [
        ['bad', '/bad'],
        ['good', '/ok'],
      ] as const) {
        const res = await api.post(`${CONNECTIONS}/${id}/functions`, {
          name,
          type: 'rest.get',
          config: { path },
          uns: { topic: `v1/plant/api/${name}`, intervalMs: 200 },
        });
        assert.equal(res.status, 201, res.text);
      }
      await api.post(`${CONNECTIONS}/${id}/start`, {});
      const r = await runtimeWhen(
        api,
        id,
        'polls failing',
        (x) => x.metrics.errors >= 3 && x.metrics.requests >= 6,
      );
      assert.ok(r.metrics.requests > r.metrics.errors, JSON.stringify(r.metrics));
      assert.equal(r.metrics.reconnects, 0, 'a failed poll is no reconnect');
      await api.post(`${CONNECTIONS}/${id}/stop`, {});
    });

    it('a failed execute while the connection is down counts in its errors', async () => {
      const port = await freePort();
      const device = new ModbusTestServer(port);
      await device.start();
      const id = await connection(api, 'Goes away', 'modbus-tcp', {
        host: '127.0.0.1',
        port,
        timeoutMs: 1000,
      });
      const fn = await api.post(`${CONNECTIONS}/${id}/functions`, {
        name: 'level',
        type: 'modbus.readHoldingRegisters',
        config: { address: 1, dataType: 'uint16' },
      });
      assert.equal(fn.status, 201, fn.text);
      await api.post(`${CONNECTIONS}/${id}/start`, {});
      await runtimeWhen(api, id, 'connected', (r) => r.state === 'connected');
      const ok = await api.post(`${CONNECTIONS}/${id}/functions/${fn.body.data.id}/execute`, {});
      assert.equal(ok.body.data.success, true, ok.text);
      await device.stop();
      const down = await runtimeWhen(
        api,
        id,
        'reconnecting',
        (r) => r.state === 'reconnecting' && r.metrics.errors >= 1,
      );
      const failed = await api.post(`${CONNECTIONS}/${id}/functions/${fn.body.data.id}/execute`, {});
      assert.equal(failed.body.data.success, false, failed.text);
      assert.match(failed.body.data.error, /^connection refused: /);
      const after = await runtimeOf(api, id);
      assert.ok(
        after.metrics.errors >= down.metrics.errors + 1,
        JSON.stringify([down.metrics, after.metrics]),
      );
      await api.post(`${CONNECTIONS}/${id}/stop`, {});
    });
  });
}
