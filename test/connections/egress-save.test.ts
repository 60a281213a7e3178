import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { checksumOf } from '../../src/modules/bundles/bundle-format.js';
import { testDialects } from '../helpers/dialects.js';
import { freePort } from '../helpers/free-port.js';
import type { TestClient } from '../helpers/http-client.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';
import { waitUntil } from '../helpers/wait.js';
import { ModbusTestServer } from './modbus-test-server.js';

const CONNECTIONS = '/api/v1/connections';
const IMPORT = '/api/v1/dependencies/import';

/** A DNS answering the test's own names, and the system's for the rest. */
const lookup = async (hostname: string) =>
  hostname === 'plc.test'
    ? [{ address: '127.0.0.1', family: 4 }]
    : (await import('node:dns/promises')).lookup(hostname, { all: true });

for (const dialect of testDialects()) {
  describe(`Egress policy: what a save refuses [${dialect}]`, () => {
    /** Default policy: loopback denied. */
    let strict: TestServer;
    /** MERIDIAN_EGRESS_ALLOW=127.0.0.1 (what the test helper sets), MERIDIAN_EGRESS_DENY=10.20.0.0/16. */
    let lab: TestServer;
    let device: ModbusTestServer;

    before(async () => {
      device = new ModbusTestServer(await freePort());
      await device.start();
      const runtime = { tickMs: 200, leaseMs: 2000, reconnectBaseMs: 200 };
      strict = await startTestServer(dialect, {
        config: { egressAllow: [] },
        connectionRuntime: runtime,
        egressLookup: lookup,
      });
      lab = await startTestServer(dialect, {
        config: { egressAllow: ['127.0.0.1'], egressDeny: ['10.20.0.0/16'] },
        connectionRuntime: runtime,
      });
    });
    after(async () => {
      await strict?.close();
      await lab?.close();
      await device?.stop();
    });

    const create = (api: TestClient, name: string, protocol: string, config: Record<string, unknown>) =>
      api.post(CONNECTIONS, { name, protocol, config });
    const count = async (api: TestClient) => (await api.get(CONNECTIONS)).body.pagination.total as number;

    it('refuses 169.254.169.254 at create and update: 400 naming the field and the egress policy', async () => {
      const before = await count(strict.admin);
      const res = await create(strict.admin, 'Metadata', 'rest', {
        baseUrl: 'http://169.254.169.254/latest/',
      });
      assert.equal(res.status, 400, res.text);
      assert.deepEqual(res.body, {
        error: 'bad_request',
        message:
          'config.baseUrl: egress policy: connections may not reach 169.254.169.254:80 (link-local, where clouds serve instance metadata); MERIDIAN_EGRESS_ALLOW can allow it',
      });
      assert.equal(await count(strict.admin), before, 'nothing was stored');
      const ok = await create(strict.admin, 'Gateway', 'rest', { baseUrl: 'http://10.0.0.30/api' });
      assert.equal(ok.status, 201, ok.text);
      const patched = await strict.admin.patch(`${CONNECTIONS}/${ok.body.data.id}`, {
        config: { baseUrl: 'http://169.254.169.254/' },
      });
      assert.equal(patched.status, 400);
      assert.match(patched.body.message, /^config\.baseUrl: egress policy: .*169\.254\.169\.254/);
      const stored = await strict.admin.get(`${CONNECTIONS}/${ok.body.data.id}`);
      assert.equal(stored.body.data.config.baseUrl, 'http://10.0.0.30/api');
      assert.equal(stored.body.data.version, 1);
    });

    it("refuses a REST connection to Meridian's own /metrics, even where loopback devices are allowed", async () => {
      const res = await create(lab.admin, 'Myself', 'rest', { baseUrl: `${lab.url}/metrics` });
      assert.equal(res.status, 400, res.text);
      assert.match(
        res.body.message,
        new RegExp(`^config\\.baseUrl: egress policy: .*:${new URL(lab.url).port} \\(Meridian's own port`),
      );
    });

    it('refuses PostgreSQL at 127.0.0.1:5432 unless allowed; on PostgreSQL, as the DATABASE_URL server even then', async () => {
      const config = { host: '127.0.0.1', port: 5432, database: 'postgres', user: 'postgres' };
      const refused = await create(strict.admin, 'Local PG', 'postgresql', config);
      assert.equal(refused.status, 400);
      const why = dialect === 'postgres' ? 'the DATABASE_URL server' : 'loopback';
      assert.match(
        refused.body.message,
        new RegExp(`^config\\.host: egress policy: .*127\\.0\\.0\\.1:5432 \\(${why}\\)`),
      );
      const inLab = await create(lab.admin, 'Local PG', 'postgresql', config);
      if (dialect === 'postgres') {
        assert.equal(inLab.status, 400, 'MERIDIAN_EGRESS_ALLOW=127.0.0.1 does not open the database');
        assert.match(inLab.body.message, /127\.0\.0\.1:5432 \(the DATABASE_URL server\)/);
      } else assert.equal(inLab.status, 201, 'no DATABASE_URL: allowed like any loopback device');
      const mariadb = await create(lab.admin, 'Local MariaDB', 'mysql', {
        ...config,
        port: 3306,
        user: 'root',
      });
      assert.equal(
        mariadb.status,
        201,
        'another port of the database host is a loopback device like any other',
      );
    });

    it('refuses localhost, IPv4-mapped IPv6 and the other spellings of a loopback address', async () => {
      for (const [protocol, config] of [
        ['modbus-tcp', { host: 'localhost', port: device.port }],
        ['modbus-tcp', { host: '::ffff:127.0.0.1', port: device.port }],
        ['modbus-tcp', { host: '127.1', port: device.port }],
        ['s7', { host: '2130706433' }],
        ['opcua', { endpointUrl: 'opc.tcp://[::1]:4840' }],
        ['mqtt', { url: 'mqtt://LocalHost.:1883' }],
        ['rest', { baseUrl: 'http://[::ffff:127.0.0.1]:8080/' }],
      ] as const) {
        const res = await create(
          strict.admin,
          `Loop ${protocol} ${JSON.stringify(config)}`,
          protocol,
          config,
        );
        assert.equal(res.status, 400, `${JSON.stringify(config)}: ${res.text}`);
        assert.match(res.body.message, /egress policy: .*loopback/, JSON.stringify(config));
      }
    });

    it('refuses a host that is no host at all (a Unix socket path pg would open)', async () => {
      const res = await create(strict.admin, 'Socket', 'postgresql', {
        host: '/var/run/postgresql',
        database: 'postgres',
        user: 'postgres',
      });
      assert.equal(res.status, 400);
      assert.equal(res.body.message, 'config.host must name a host name or an IP address');
    });

    it('MERIDIAN_EGRESS_ALLOW lets a loopback device through; MERIDIAN_EGRESS_DENY narrows a private range', async () => {
      const refused = await create(strict.admin, 'Press sim', 'modbus-tcp', {
        host: '127.0.0.1',
        port: device.port,
      });
      assert.equal(refused.status, 400);
      const allowed = await create(lab.admin, 'Press sim', 'modbus-tcp', {
        host: '127.0.0.1',
        port: device.port,
      });
      assert.equal(allowed.status, 201, allowed.text);
      const id = allowed.body.data.id;
      assert.equal((await lab.admin.post(`${CONNECTIONS}/${id}/start`, {})).status, 202);
      await waitUntil('the allowed device is connected', async () => {
        const runtime = await lab.admin.get(`${CONNECTIONS}/${id}/runtime`);
        return runtime.body.data.state === 'connected' ? true : null;
      });
      await lab.admin.post(`${CONNECTIONS}/${id}/stop`, {});
      const office = await create(lab.admin, 'Office', 'modbus-tcp', { host: '10.20.0.5' });
      assert.equal(office.status, 400);
      assert.match(office.body.message, /MERIDIAN_EGRESS_DENY lists 10\.20\.0\.0\/16/);
      assert.doesNotMatch(office.body.message, /MERIDIAN_EGRESS_ALLOW/, 'no hint to allow what DENY lists');
      assert.equal((await create(lab.admin, 'Plant', 'modbus-tcp', { host: '10.21.0.5' })).status, 201);
    });

    it('refuses an import whose connection the policy denies, and an import with activation never reaches it', async () => {
      // A bundle as another instance, whose policy allowed it, would have exported it.
      const source = await create(strict.admin, 'Exported press', 'modbus-tcp', {
        host: '10.0.0.99',
        port: 502,
      });
      assert.equal(source.status, 201);
      const exported = await strict.admin.post('/api/v1/dependencies/export', {
        select: [{ type: 'connection', id: source.body.data.id }],
      });
      assert.equal(exported.status, 201, exported.text);
      const file = await strict.admin.get(`/api/v1/dependencies/export/${exported.body.data.id}/download`);
      const bundleFor = (host: string) => {
        const bundle = structuredClone(file.body);
        Object.assign(bundle.entities.connections[0], {
          name: `Imported ${host}`,
          config: { host, port: device.port },
          autoStart: true,
        });
        bundle.checksum = checksumOf(bundle);
        return bundle;
      };
      const literal = await strict.admin.post(`${IMPORT}/validate`, {
        bundle: bundleFor('127.0.0.1'),
        options: { conflict: 'rename', activate: true },
      });
      assert.equal(literal.status, 200, literal.text);
      assert.equal(literal.body.data.canExecute, false);
      assert.equal(literal.body.data.planId, null);
      assert.deepEqual(
        literal.body.data.problems.map((p: { code: string }) => p.code),
        ['egress_denied'],
      );
      assert.match(
        literal.body.data.problems[0].message,
        /config\.host: egress policy: .*127\.0\.0\.1.*loopback/,
      );

      // A name is judged when it is resolved: the import starts the connection, which ends in error.
      const sessionsBefore = device.opened;
      const named = await strict.admin.post(`${IMPORT}/validate`, {
        bundle: bundleFor('plc.test'),
        options: { conflict: 'rename', activate: true },
      });
      assert.equal(named.body.data.canExecute, true, named.text);
      const executed = await strict.admin.post(`${IMPORT}/execute`, {
        planId: named.body.data.planId,
        inputs: {},
      });
      assert.equal(executed.status, 201, executed.text);
      const id = executed.body.data.idMap['connection:Exported press'];
      const runtime = await waitUntil('the imported connection gives up', async () => {
        const r = await strict.admin.get(`${CONNECTIONS}/${id}/runtime`);
        return r.body.data.state === 'error' ? r.body.data : null;
      });
      assert.match(
        runtime.lastError,
        /^egress policy: connections may not reach plc\.test:\d+: it resolves to 127\.0\.0\.1 \(loopback\)/,
      );
      assert.equal(device.opened, sessionsBefore, 'the device never saw a connection from it');
    });
  });
}
