import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { testDialects } from '../helpers/dialects.js';
import { freePort } from '../helpers/free-port.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';
import { waitUntil } from '../helpers/wait.js';

for (const dialect of testDialects()) {
  describe(`REST connection losing its server [${dialect}]`, () => {
    let server: TestServer;
    let http: Server | undefined;
    let httpPort: number;
    let speed = 42;

    /** A small HTTP API on a fixed port: started, stopped (every socket closed) and started again. */
    const startHttp = async () => {
      http = createServer((req, res) => {
        if (req.url?.startsWith('/api/status')) {
          res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ speed }));
        } else res.writeHead(404).end();
      });
      await new Promise<void>((resolve) => http!.listen(httpPort, '127.0.0.1', resolve));
    };
    const stopHttp = async () => {
      const closing = new Promise<void>((resolve) => http!.close(() => resolve()));
      http!.closeAllConnections();
      await closing;
    };

    before(async () => {
      httpPort = await freePort();
      await startHttp();
      server = await startTestServer(dialect, {
        connectionRuntime: { tickMs: 200, leaseMs: 2000, reconnectBaseMs: 200 },
      });
    });
    after(async () => {
      await server?.close();
      if (http?.listening) await stopHttp();
    });

    it('goes reconnecting when the server stops answering and connected when it is back, polling into the UNS', async () => {
      const admin = server.admin;
      const created = await admin.post('/api/v1/connections', {
        name: 'Line API',
        protocol: 'rest',
        config: { baseUrl: `http://127.0.0.1:${httpPort}`, timeoutMs: 2000 },
      });
      assert.equal(created.status, 201, created.text);
      const id = created.body.data.id as string;
      const fn = await admin.post(`/api/v1/connections/${id}/functions`, {
        name: 'status',
        type: 'rest.get',
        config: { path: '/api/status' },
        uns: { topic: 'v1/plant/line/api/status', intervalMs: 200 },
      });
      assert.equal(fn.status, 201, fn.text);
      const state = async () => (await admin.get(`/api/v1/connections/${id}/runtime`)).body.data.state;
      const latestSpeed = async () =>
        (await admin.get('/api/v1/uns/data/latest?topic=v1/plant/line/api/status')).body.data?.value?.speed;

      let unhandled: unknown;
      const onUnhandled = (reason: unknown) => {
        unhandled = reason;
      };
      process.on('unhandledRejection', onUnhandled);
      try {
        assert.equal((await admin.post(`/api/v1/connections/${id}/start`)).status, 202);
        await waitUntil('connected', async () => ((await state()) === 'connected' ? true : null));
        await waitUntil('the polled value', async () => ((await latestSpeed()) === 42 ? true : null));
        await stopHttp();
        await waitUntil('reconnecting', async () => ((await state()) === 'reconnecting' ? true : null));
        // While the server is away, the connection keeps trying and does not claim to be connected.
        const runtime = (await admin.get(`/api/v1/connections/${id}/runtime`)).body.data;
        assert.match(runtime.lastError, /ECONNREFUSED|ECONNRESET|socket|closed/i);
        speed = 43;
        await startHttp();
        await waitUntil('connected again', async () => ((await state()) === 'connected' ? true : null));
        await waitUntil('the new value', async () => ((await latestSpeed()) === 43 ? true : null));
      } finally {
        process.off('unhandledRejection', onUnhandled);
      }
      assert.equal(unhandled, undefined);
      const history = await admin.get(`/api/v1/connections/${id}/state-history?limit=500`);
      const transitions = history.body.data.map((e: { to: string }) => e.to).reverse() as string[];
      const reconnecting = transitions.indexOf('reconnecting');
      assert.ok(reconnecting > transitions.indexOf('connected'), transitions.join(','));
      assert.ok(transitions.indexOf('connected', reconnecting) > reconnecting, transitions.join(','));
      assert.ok(!transitions.includes('degraded'), transitions.join(','));
      assert.equal((await admin.post(`/api/v1/connections/${id}/stop`)).status, 202);
    });

    it('a session opened for one execute fails fast and readably when the server is away', async () => {
      const closed = await freePort();
      const created = await server.admin.post('/api/v1/connections', {
        name: 'Absent API',
        protocol: 'rest',
        config: { baseUrl: `http://127.0.0.1:${closed}/api`, timeoutMs: 2000 },
      });
      const id = created.body.data.id as string;
      const fn = await server.admin.post(`/api/v1/connections/${id}/functions`, {
        name: 'status',
        type: 'rest.get',
        config: { path: '/status' },
      });
      const res = await server.admin.post(
        `/api/v1/connections/${id}/functions/${fn.body.data.id}/execute`,
        {},
      );
      assert.equal(res.status, 200, res.text);
      assert.equal(res.body.data.success, false);
      assert.match(res.body.data.error, new RegExp(`cannot reach 127\\.0\\.0\\.1:${closed}: ECONNREFUSED`));
    });
  });
}
