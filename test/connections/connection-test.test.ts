import assert from 'node:assert/strict';
import { createServer, type Server, type Socket } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { testDialects } from '../helpers/dialects.js';
import { signedInMember } from '../helpers/factories.js';
import { freePort } from '../helpers/free-port.js';
import type { TestClient } from '../helpers/http-client.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';
import { ModbusTestServer } from './modbus-test-server.js';
import { OPCUA_PASSWORD, OPCUA_USER, OpcuaTestServer } from './opcua-test-server.js';

const TEST = '/api/v1/connections/test';
const WRONG = 'wrong-Pa55-never-echoed';

/** A TCP listener that accepts and never says a word (a device that hangs in its handshake). */
async function silentListener(port: number): Promise<{ close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  const server: Server = createServer((socket) => {
    sockets.add(socket);
    socket.on('error', () => {});
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  return {
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

for (const dialect of testDialects()) {
  describe(`POST /connections/test [${dialect}]`, () => {
    let server: TestServer;
    let api: TestClient;
    let modbus: ModbusTestServer;
    let opcua: OpcuaTestServer;

    /** What a test must leave as it found it: connections, versions and audit entries. */
    const stored = async () => {
      const db = server.storage.db;
      const count = async (table: 'connections' | 'entity_versions' | 'audit_log') =>
        Number(
          (
            await db
              .selectFrom(table)
              .select((eb) => eb.fn.countAll<number>().as('n'))
              .executeTakeFirstOrThrow()
          ).n,
        );
      return [await count('connections'), await count('entity_versions'), await count('audit_log')];
    };

    before(async () => {
      server = await startTestServer(dialect, { config: { egressAllow: ['127.0.0.1', '127.0.0.1:5432'] } });
      api = server.admin;
      modbus = new ModbusTestServer(await freePort());
      await modbus.start();
      opcua = new OpcuaTestServer(await freePort());
      await opcua.start();
    });
    after(async () => {
      await modbus?.stop();
      await opcua?.stop();
      await server?.close();
    });

    it('opens and closes a Modbus session against a real device; stores nothing', async () => {
      const before = await stored();
      const opened = modbus.opened;
      const res = await api.post(TEST, {
        protocol: 'modbus-tcp',
        config: { host: '127.0.0.1', port: modbus.port, unitId: 1 },
      });
      assert.equal(res.status, 200, res.text);
      assert.equal(res.body.data.success, true);
      assert.equal(res.body.data.error, null);
      assert.equal(typeof res.body.data.durationMs, 'number');
      assert.equal(modbus.opened, opened + 1);
      assert.equal(modbus.requests, 0, 'no function ran');
      assert.deepEqual(await stored(), before);
    });

    it('opens an OPC UA session with a user and password, and closes it', async () => {
      const res = await api.post(TEST, {
        protocol: 'opcua',
        config: { endpointUrl: opcua.endpointUrl, username: OPCUA_USER, password: OPCUA_PASSWORD },
      });
      assert.equal(res.status, 200, res.text);
      assert.equal(res.body.data.success, true, res.text);
      for (let i = 0; i < 50 && opcua.sessions() > 0; i++) await new Promise((r) => setTimeout(r, 100));
      assert.equal(opcua.sessions(), 0, 'the session is closed');
    });

    it('a wrong OPC UA password: authentication failed, the password never in the answer', async () => {
      const before = await stored();
      const res = await api.post(TEST, {
        protocol: 'opcua',
        config: { endpointUrl: opcua.endpointUrl, username: OPCUA_USER, password: WRONG },
      });
      assert.equal(res.status, 200, res.text);
      assert.equal(res.body.data.success, false);
      assert.equal(res.body.data.reason, 'authentication_failed');
      assert.match(res.body.data.error, /^authentication failed: /);
      assert.ok(!res.text.includes(WRONG));
      assert.deepEqual(await stored(), before);
    });

    it('security the server does not offer: security rejected', async () => {
      const res = await api.post(TEST, {
        protocol: 'opcua',
        config: {
          endpointUrl: opcua.endpointUrl,
          securityMode: 'SignAndEncrypt',
          securityPolicy: 'Aes256_Sha256_RsaPss',
        },
      });
      assert.equal(res.body.data.success, false, res.text);
      assert.equal(res.body.data.reason, 'security_rejected');
      assert.match(res.body.data.error, /^security rejected: /);
    });

    it('a closed port: connection refused', async () => {
      const port = await freePort();
      const res = await api.post(TEST, { protocol: 'modbus-tcp', config: { host: '127.0.0.1', port } });
      assert.equal(res.body.data.success, false, res.text);
      assert.equal(res.body.data.reason, 'connection_refused');
      assert.match(res.body.data.error, /^connection refused: .*127\.0\.0\.1/);
      const ua = await api.post(TEST, {
        protocol: 'opcua',
        config: { endpointUrl: `opc.tcp://127.0.0.1:${port}` },
      });
      assert.equal(ua.body.data.reason, 'connection_refused', ua.text);
    });

    it('a host that does not resolve: host not found', async () => {
      const res = await api.post(TEST, {
        protocol: 'modbus-tcp',
        config: { host: 'no-such-plc.invalid', port: 502 },
      });
      assert.equal(res.body.data.success, false, res.text);
      assert.equal(res.body.data.reason, 'host_not_found');
      assert.match(res.body.data.error, /^host not found: .*no-such-plc\.invalid/);
    });

    it('a device that accepts and never answers: timed out', async () => {
      const port = await freePort();
      const silent = await silentListener(port);
      try {
        const res = await api.post(TEST, {
          protocol: 'opcua',
          config: { endpointUrl: `opc.tcp://127.0.0.1:${port}`, timeoutMs: 1000 },
        });
        assert.equal(res.body.data.success, false, res.text);
        assert.equal(res.body.data.reason, 'timed_out');
        assert.match(res.body.data.error, /^timed out: /);
      } finally {
        await silent.close();
      }
    });

    it('PostgreSQL and MariaDB refusing the user or password: authentication failed', async () => {
      const pg = await api.post(TEST, {
        protocol: 'postgresql',
        config: {
          host: '127.0.0.1',
          port: 5432,
          database: 'postgres',
          user: 'no_such_role_x',
          password: WRONG,
        },
      });
      assert.equal(pg.body.data.success, false, pg.text);
      assert.equal(pg.body.data.reason, 'authentication_failed');
      assert.ok(!pg.text.includes(WRONG));
      const maria = await api.post(TEST, {
        protocol: 'mysql',
        config: { host: '127.0.0.1', port: 3306, database: 'mysql', user: 'root', password: WRONG },
      });
      assert.equal(maria.body.data.success, false, maria.text);
      assert.equal(maria.body.data.reason, 'authentication_failed');
      assert.ok(!maria.text.includes(WRONG));
      const ok = await api.post(TEST, {
        protocol: 'mysql',
        config: { host: '127.0.0.1', port: 3306, database: 'mysql', user: 'root', password: '' },
      });
      assert.equal(ok.body.data.success, true, ok.text);
    });

    it('bad input is 400 naming the field, and changes nothing', async () => {
      const before = await stored();
      const cases: [unknown, RegExp][] = [
        [{ protocol: 'modbus-tcp' }, /config/],
        [{ protocol: 'no-such', config: {} }, /protocol/],
        [{ protocol: 'modbus-tcp', config: { port: 502 } }, /host/],
        [{ protocol: 'modbus-tcp', config: { host: '127.0.0.1', port: 'x' } }, /port/],
        [{ protocol: 'modbus-tcp', config: { host: '169.254.169.254', port: 502 } }, /config\.host.*egress/i],
        [{ protocol: 'modbus-tcp', config: { host: '127.0.0.1' }, name: 'extra' }, /name/],
      ];
      for (const [body, message] of cases) {
        const res = await api.post(TEST, body);
        assert.equal(res.status, 400, `${JSON.stringify(body)}: ${res.text}`);
        assert.equal(res.body.error, 'bad_request');
        assert.match(res.body.message, message);
      }
      assert.deepEqual(await stored(), before);
    });

    it('needs what creating a connection needs: a Viewer is refused', async () => {
      const { client } = await signedInMember(server, 'Viewer');
      const res = await client.post(TEST, {
        protocol: 'modbus-tcp',
        config: { host: '127.0.0.1', port: modbus.port },
      });
      assert.equal(res.status, 403, res.text);
      const { client: editor } = await signedInMember(server, 'Editor');
      const ok = await editor.post(TEST, {
        protocol: 'modbus-tcp',
        config: { host: '127.0.0.1', port: modbus.port },
      });
      assert.equal(ok.status, 200, ok.text);
      assert.equal(ok.body.data.success, true);
    });
  });
}
