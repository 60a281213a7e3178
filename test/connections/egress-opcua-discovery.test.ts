import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { createTestDatabase, type TestDatabase, testDialects } from '../helpers/dialects.js';
import { freePort } from '../helpers/free-port.js';
import { TestClient } from '../helpers/http-client.js';
import { type MeridianProcess, runMeridian } from '../helpers/process.js';
import { waitUntil } from '../helpers/wait.js';
import { OPCUA_PASSWORD, OPCUA_USER, OpcuaTestServer } from './opcua-test-server.js';

const ADMIN_PASSWORD = 'discovery-admin-password';

/**
 * node-opcua follows the endpoint URL a server advertises (GetEndpoints) instead of the one it was given
 * when NODEOPCUA_CLIENT_FORCE_ENDPOINT_DISCOVERY is set in its process, and fetches a secured endpoint's
 * certificate through a client of its own that no transport factory reaches. A server on an allowed
 * address that advertises a denied one must not get Meridian to dial it, even so.
 */
for (const dialect of testDialects()) {
  describe(`OPC UA endpoint discovery stays inside the egress policy [${dialect}]`, () => {
    let database: TestDatabase;
    let meridian: MeridianProcess | undefined;
    let opcua: OpcuaTestServer;
    let listener: Server;
    let hits = 0;

    before(async () => {
      database = await createTestDatabase(dialect);
      const port = await freePort();
      // What the server advertises: 127.0.0.1 at its own port, where this listener counts visitors.
      listener = createServer((socket) => {
        hits++;
        socket.destroy();
      });
      await new Promise<void>((resolve) => listener.listen(port, '127.0.0.1', resolve));
      opcua = new OpcuaTestServer(port, '127.0.0.2', '127.0.0.1');
      await opcua.start();
    });
    after(async () => {
      if (meridian && meridian.child.exitCode === null) {
        meridian.child.kill('SIGTERM');
        await meridian.exited;
      }
      await opcua?.stop();
      listener?.close();
      await database?.drop();
    });

    it('connects at the URL given and never dials the advertised endpoint, with discovery forced', async () => {
      const httpPort = await freePort();
      meridian = runMeridian(['serve'], {
        MERIDIAN_DATA_DIR: database.dataDir,
        DATABASE_URL: database.databaseUrl,
        MERIDIAN_HTTP_HOST: '127.0.0.1',
        MERIDIAN_HTTP_PORT: String(httpPort),
        MERIDIAN_MQTT_PORT: '0',
        MERIDIAN_ADMIN_PASSWORD: ADMIN_PASSWORD,
        MERIDIAN_EGRESS_ALLOW: '127.0.0.2',
        NODEOPCUA_CLIENT_FORCE_ENDPOINT_DISCOVERY: '1',
      });
      await meridian.waitFor(/Meridian ready in \d+ ms/, 90_000);
      const orgId = /organization id: +(\S+)/.exec(meridian.output())?.[1];
      const api = await new TestClient(`http://127.0.0.1:${httpPort}`).login(
        'admin@localhost',
        ADMIN_PASSWORD,
        orgId,
      );
      for (const security of [{}, { securityMode: 'SignAndEncrypt', securityPolicy: 'Basic256Sha256' }]) {
        const made = await api.post('/api/v1/connections', {
          name: `Advertising server ${JSON.stringify(security)}`,
          protocol: 'opcua',
          config: {
            endpointUrl: opcua.endpointUrl,
            username: OPCUA_USER,
            password: OPCUA_PASSWORD,
            timeoutMs: 5000,
            ...security,
          },
        });
        assert.equal(made.status, 201, made.text);
        const id = made.body.data.id;
        assert.equal((await api.post(`/api/v1/connections/${id}/start`, {})).status, 202);
        const runtime = await waitUntil(
          'the connection settles',
          async () => {
            const r = (await api.get(`/api/v1/connections/${id}/runtime`)).body.data;
            return r.state === 'connected' || r.state === 'error' ? r : null;
          },
          60_000,
        );
        assert.equal(
          runtime.state,
          'connected',
          `${JSON.stringify(runtime)}\n${meridian.output().slice(-3000)}`,
        );
        await api.post(`/api/v1/connections/${id}/stop`, {});
      }
      assert.equal(hits, 0, 'nothing dialled the advertised endpoint on 127.0.0.1');
    });
  });
}
