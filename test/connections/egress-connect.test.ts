import assert from 'node:assert/strict';
import { lookup as systemLookup } from 'node:dns/promises';
import { createServer as createHttpServer, type Server as HttpServer } from 'node:http';
import { createServer, type Server } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { createChain, runOnce } from '../engine/pipeline-runner.js';
import { testDialects } from '../helpers/dialects.js';
import { freePort } from '../helpers/free-port.js';
import type { TestClient } from '../helpers/http-client.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';
import { waitUntil } from '../helpers/wait.js';
import { ModbusTestServer } from './modbus-test-server.js';
import { OPCUA_PASSWORD, OPCUA_USER, OpcuaTestServer } from './opcua-test-server.js';

const CONNECTIONS = '/api/v1/connections';

/** Names of the test's own, each answering what `names` holds now; the system's DNS for the rest. */
function testDns(names: Record<string, string>) {
  return async (hostname: string) =>
    names[hostname]
      ? [{ address: names[hostname]!, family: names[hostname]!.includes(':') ? 6 : 4 }]
      : systemLookup(hostname, { all: true });
}

/** A TCP listener on 127.0.0.1 that counts who reaches it: what a denied target must never see. */
async function recorder(port = 0): Promise<{ server: Server; port: number; hits: () => number }> {
  let hits = 0;
  const server = createServer((socket) => {
    hits++;
    socket.destroy();
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', resolve);
  });
  return { server, port: (server.address() as { port: number }).port, hits: () => hits };
}

async function connection(api: TestClient, name: string, protocol: string, config: Record<string, unknown>) {
  const res = await api.post(CONNECTIONS, { name, protocol, config });
  assert.equal(res.status, 201, res.text);
  return res.body.data.id as string;
}

async function fn(api: TestClient, connectionId: string, body: Record<string, unknown>) {
  const res = await api.post(`${CONNECTIONS}/${connectionId}/functions`, body);
  assert.equal(res.status, 201, res.text);
  return res.body.data.id as string;
}

const execute = async (api: TestClient, connectionId: string, functionId: string) =>
  (await api.post(`${CONNECTIONS}/${connectionId}/functions/${functionId}/execute`, {})).body.data;

async function startAndSettle(api: TestClient, id: string, state: string) {
  assert.equal((await api.post(`${CONNECTIONS}/${id}/start`, {})).status, 202);
  return waitUntil(`connection ${id} is ${state}`, async () => {
    const runtime = (await api.get(`${CONNECTIONS}/${id}/runtime`)).body.data;
    return runtime.state === state ? runtime : null;
  });
}

for (const dialect of testDialects()) {
  describe(`Egress policy: checked after DNS, pinned, on every hop [${dialect}]`, () => {
    /**
     * MERIDIAN_EGRESS_ALLOW=127.0.0.2 (the devices here listen there; 127.0.0.1 stays denied) and the ports
     * of the local MariaDB, PostgreSQL and Mosquitto on 127.0.0.1.
     */
    let server: TestServer;
    const names: Record<string, string> = {
      'plc.test': '127.0.0.1',
      'mapped.test': '::ffff:127.0.0.1',
      'press.test': '127.0.0.2',
      'opc.test': '127.0.0.2',
      'meta.test': '169.254.169.254',
      'db.test': '127.0.0.1',
    };
    let device: ModbusTestServer;
    let loopbackDevice: ModbusTestServer;

    before(async () => {
      device = new ModbusTestServer(await freePort(), '127.0.0.2');
      await device.start();
      loopbackDevice = new ModbusTestServer(await freePort());
      await loopbackDevice.start();
      server = await startTestServer(dialect, {
        config: { egressAllow: ['127.0.0.2', '127.0.0.1:3306', '127.0.0.1:5432', '127.0.0.1:1883'] },
        connectionRuntime: { tickMs: 200, leaseMs: 2000, reconnectBaseMs: 200 },
        egressLookup: testDns(names),
      });
    });
    after(async () => {
      await server?.close();
      await device?.stop();
      await loopbackDevice?.stop();
    });

    it('fails a connection whose name resolves to a denied address, the same for an open and a closed port', async () => {
      const closedPort = await freePort();
      const open = await connection(server.admin, 'Open', 'modbus-tcp', {
        host: 'plc.test',
        port: loopbackDevice.port,
      });
      const closed = await connection(server.admin, 'Closed', 'modbus-tcp', {
        host: 'plc.test',
        port: closedPort,
      });
      const states = [
        await startAndSettle(server.admin, open, 'error'),
        await startAndSettle(server.admin, closed, 'error'),
      ];
      const [a, b] = states.map((s) => s.lastError as string);
      assert.equal(
        a,
        `egress policy: connections may not reach plc.test:${loopbackDevice.port}: it resolves to 127.0.0.1 (loopback); MERIDIAN_EGRESS_ALLOW can allow it`,
      );
      assert.equal(a.replace(String(loopbackDevice.port), 'PORT'), b!.replace(String(closedPort), 'PORT'));
      const history = await server.admin.get(`${CONNECTIONS}/state-history?connectionId=${open}`);
      assert.ok(
        history.body.data.some((e: { reason: string }) => e.reason === 'config_error'),
        history.text,
      );

      // An execute opens a session of its own: refused the same way.
      const read = { name: 'read', type: 'modbus.readHoldingRegisters', config: { address: 0 } };
      const results = [await execute(server.admin, open, await fn(server.admin, open, read))];
      results.push(await execute(server.admin, closed, await fn(server.admin, closed, read)));
      assert.deepEqual(
        results.map((r) => [r.success, r.error.replace(/:\d+:/, ':PORT:')]),
        [
          [false, a.replace(`:${loopbackDevice.port}:`, ':PORT:')],
          [false, a.replace(`:${loopbackDevice.port}:`, ':PORT:')],
        ],
      );
      assert.equal(loopbackDevice.opened, 0, 'no socket reached the denied device');
    });

    it('denies a name that resolves to an IPv4-mapped IPv6 form of a denied address', async () => {
      const id = await connection(server.admin, 'Mapped', 'modbus-tcp', {
        host: 'mapped.test',
        port: loopbackDevice.port,
      });
      const runtime = await startAndSettle(server.admin, id, 'error');
      assert.match(
        runtime.lastError,
        /^egress policy: .*mapped\.test:\d+: it resolves to ::ffff:127\.0\.0\.1 \(loopback\)/,
      );
    });

    it('connects a name to the address the policy checked, and checks it again on every reconnect', async () => {
      const id = await connection(server.admin, 'Press', 'modbus-tcp', {
        host: 'press.test',
        port: device.port,
        timeoutMs: 1000,
      });
      await startAndSettle(server.admin, id, 'connected');
      assert.equal(device.sessions(), 1);
      // DNS now answers a denied address; the device goes away and comes back.
      names['press.test'] = '127.0.0.1';
      await device.stop();
      await device.start();
      const runtime = await waitUntil('the reconnect is refused', async () => {
        const r = (await server.admin.get(`${CONNECTIONS}/${id}/runtime`)).body.data;
        return r.state === 'error' ? r : null;
      });
      assert.match(
        runtime.lastError,
        /^egress policy: .*press\.test:\d+: it resolves to 127\.0\.0\.1 \(loopback\)/,
      );
      assert.equal(loopbackDevice.opened, 0);
      names['press.test'] = '127.0.0.2';
    });

    it('every protocol checks the name it connects to: a name resolving to the metadata address fails', async () => {
      for (const [protocol, config, port, type, fnConfig] of [
        ['modbus-tcp', { host: 'meta.test' }, 502, 'modbus.readCoils', { address: 0 }],
        ['s7', { host: 'meta.test' }, 102, 's7.read', { address: 'DB1,INT0' }],
        ['opcua', { endpointUrl: 'opc.tcp://meta.test/UA' }, 4840, 'opcua.read', { nodeId: 'i=2258' }],
        ['mqtt', { url: 'mqtt://meta.test' }, 1883, 'mqtt.read', { topic: 'x' }],
        ['mqtt', { url: 'wss://meta.test/mqtt' }, 443, 'mqtt.read', { topic: 'x' }],
        ['rest', { baseUrl: 'https://meta.test/api' }, 443, 'rest.get', { path: '/x' }],
        [
          'postgresql',
          { host: 'meta.test', database: 'd', user: 'u' },
          5432,
          'sql.query',
          { sql: 'select 1' },
        ],
        ['mysql', { host: 'meta.test', database: 'd', user: 'u' }, 3306, 'sql.query', { sql: 'select 1' }],
      ] as const) {
        const id = await connection(server.admin, `Metadata ${protocol} ${port}`, protocol, config);
        const result = await execute(
          server.admin,
          id,
          await fn(server.admin, id, { name: 'f', type, config: fnConfig }),
        );
        assert.equal(result.success, false, protocol);
        assert.equal(
          result.error,
          `egress policy: connections may not reach meta.test:${port}: it resolves to 169.254.169.254 (link-local, where clouds serve instance metadata); MERIDIAN_EGRESS_ALLOW can allow it`,
          `${protocol} ${port}`,
        );
      }
    });

    it('PostgreSQL, MariaDB and MQTT connect a name to the address the policy checked (host:port entries)', async () => {
      for (const [protocol, config, type, fnConfig] of [
        [
          'postgresql',
          { host: 'db.test', database: 'postgres', user: 'postgres' },
          'sql.query',
          { sql: 'select 1 as one' },
        ],
        [
          'mysql',
          { host: 'db.test', database: 'mysql', user: 'root' },
          'sql.query',
          { sql: 'select 1 as one' },
        ],
        [
          'mqtt',
          { url: 'mqtt://db.test:1883' },
          'mqtt.publish',
          { topic: 'meridian-test/egress', payload: 1 },
        ],
      ] as const) {
        const id = await connection(server.admin, `Pinned ${protocol}`, protocol, config);
        const f = await fn(server.admin, id, { name: 'f', type, config: fnConfig });
        const result = (
          await server.admin.post(`${CONNECTIONS}/${id}/functions/${f}/execute`, { confirmWrites: true })
        ).body.data;
        assert.equal(result.success, true, `${protocol}: ${JSON.stringify(result)}`);
      }
      const other = await connection(server.admin, 'Other port', 'mysql', {
        host: 'db.test',
        port: 3307,
        database: 'd',
        user: 'u',
      });
      const result = await execute(
        server.admin,
        other,
        await fn(server.admin, other, { name: 'f', type: 'sql.query', config: { sql: 'select 1' } }),
      );
      assert.match(
        result.error,
        /^egress policy: connections may not reach db\.test:3307: it resolves to 127\.0\.0\.1 \(loopback\)/,
      );
    });

    it("fails a pipeline's connection.call node with the policy's error", async () => {
      const id = await connection(server.admin, 'Called', 'modbus-tcp', {
        host: 'meta.test',
        timeoutMs: 500,
      });
      const read = await fn(server.admin, id, {
        name: 'r',
        type: 'modbus.readCoils',
        config: { address: 0 },
      });
      const pipeline = await createChain(server.admin, 'Call a denied device', [
        { id: 'read', type: 'connection.call', parameters: { connectionId: id, functionId: read } },
      ]);
      const { execution } = await runOnce(server.admin, pipeline, null);
      assert.equal(execution.status, 'failed');
      assert.match(
        execution.error!.message,
        /egress policy: connections may not reach meta\.test:502: it resolves to 169\.254\.169\.254/,
      );
    });

    describe('REST redirects', () => {
      let http: HttpServer;
      let secret: Awaited<ReturnType<typeof recorder>>;
      let baseUrl: string;

      before(async () => {
        secret = await recorder();
        http = createHttpServer((req, res) => {
          const to = (location: string) => res.writeHead(302, { location }).end();
          if (req.url === '/hop') to('/data');
          else if (req.url === '/data')
            res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":1}');
          else if (req.url === '/escape') to(`http://127.0.0.1:${secret.port}/secret`);
          else if (req.url === '/escape-localhost') to(`http://localhost:${secret.port}/secret`);
          else if (req.url === '/escape-mapped') to(`http://[::ffff:127.0.0.1]:${secret.port}/secret`);
          else if (req.url === '/escape-metadata') to('http://169.254.169.254/latest/meta-data/');
          else res.writeHead(404).end();
        });
        await new Promise<void>((resolve) => http.listen(0, '127.0.0.2', resolve));
        baseUrl = `http://127.0.0.2:${(http.address() as { port: number }).port}`;
      });
      after(() => {
        http?.close();
        secret?.server.close();
      });

      it('follows a redirect the policy allows and refuses one to a denied address, at the hop', async () => {
        const id = await connection(server.admin, 'Gateway', 'rest', { baseUrl, timeoutMs: 2000 });
        const get = (path: string) =>
          fn(server.admin, id, { name: `get ${path}`, type: 'rest.get', config: { path } });
        const followed = await execute(server.admin, id, await get('/hop'));
        assert.deepEqual([followed.success, followed.value], [true, { ok: 1 }]);
        for (const [path, target] of [
          ['/escape', `127.0.0.1:${secret.port} \\(loopback`],
          ['/escape-localhost', `localhost:${secret.port}: it resolves to 127\\.0\\.0\\.1 \\(loopback`],
          ['/escape-mapped', `\\[::ffff:7f00:1\\]:${secret.port} \\(loopback`],
          ['/escape-metadata', '169\\.254\\.169\\.254:80 \\(link-local'],
        ] as const) {
          const result = await execute(server.admin, id, await get(path));
          assert.equal(result.success, false, path);
          assert.match(result.error, new RegExp(`^egress policy: connections may not reach ${target}`), path);
        }
        assert.equal(secret.hits(), 0, 'no redirect reached the loopback server');
        const runtime = await startAndSettle(server.admin, id, 'connected');
        assert.equal(runtime.lastError, null);
      });

      it("refuses a function path that leaves the connection's host", async () => {
        const id = await connection(server.admin, 'Gateway 2', 'rest', { baseUrl, timeoutMs: 2000 });
        const path = `//127.0.0.1:${secret.port}/secret`;
        const result = await execute(
          server.admin,
          id,
          await fn(server.admin, id, { name: 'away', type: 'rest.get', config: { path } }),
        );
        assert.equal(result.success, false);
        assert.match(
          result.error,
          /^the path \/\/127\.0\.0\.1:\d+\/secret leaves http:\/\/127\.0\.0\.2:\d+$/,
        );
        assert.equal(secret.hits(), 0);
      });
    });

    describe('OPC UA: the endpoint a server advertises', () => {
      let opcua: OpcuaTestServer;
      let advertised: Awaited<ReturnType<typeof recorder>>;

      before(async () => {
        // The server listens on 127.0.0.2 and advertises 127.0.0.1 at the same port, where a listener
        // counts whoever follows the advertisement.
        for (let attempt = 0; !advertised; attempt++) {
          const port = await freePort();
          advertised = await recorder(port).catch((error) => {
            if (attempt > 20) throw error;
            return undefined as never;
          });
        }
        opcua = new OpcuaTestServer(advertised.port, '127.0.0.2', '127.0.0.1');
        await opcua.start();
      });
      after(async () => {
        await opcua?.stop();
        advertised?.server.close();
      });

      for (const [mode, extra] of [
        ['None', {}],
        ['SignAndEncrypt', { securityMode: 'SignAndEncrypt', securityPolicy: 'Basic256Sha256' }],
      ] as const) {
        it(`opens the session at the URL the connection names, never at the advertised one (${mode})`, async () => {
          const id = await connection(server.admin, `OPC UA ${mode}`, 'opcua', {
            endpointUrl: `opc.tcp://opc.test:${opcua.port}/UA/Test`,
            username: OPCUA_USER,
            password: OPCUA_PASSWORD,
            timeoutMs: 5000,
            ...extra,
          });
          await startAndSettle(server.admin, id, 'connected');
          const read = await fn(server.admin, id, {
            name: 'temp',
            type: 'opcua.read',
            config: { nodeId: 'ns=1;s=Press4.Temperature' },
          });
          assert.equal((await execute(server.admin, id, read)).value, 20.5);
          await server.admin.post(`${CONNECTIONS}/${id}/stop`, {});
          assert.equal(advertised.hits(), 0, 'nothing dialled the advertised endpoint on 127.0.0.1');
        });
      }

      it('fails an endpoint whose name resolves to a denied address', async () => {
        const id = await connection(server.admin, 'OPC UA denied', 'opcua', {
          endpointUrl: `opc.tcp://plc.test:${opcua.port}/UA/Test`,
          timeoutMs: 5000,
        });
        const runtime = await startAndSettle(server.admin, id, 'error');
        assert.match(
          runtime.lastError,
          /^egress policy: connections may not reach plc\.test:\d+: it resolves to 127\.0\.0\.1/,
        );
        assert.equal(advertised.hits(), 0);
      });
    });
  });
}
