import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { freePort } from '../helpers/free-port.js';
import { TestClient } from '../helpers/http-client.js';
import { type MeridianProcess, runMeridian } from '../helpers/process.js';
import { waitUntil } from '../helpers/wait.js';
import { ModbusTestServer } from './modbus-test-server.js';
import { OPCUA_PASSWORD, OPCUA_USER, OpcuaTestServer } from './opcua-test-server.js';

const ADMIN_PASSWORD = 'restart-admin-password';
const WRONG_PASSWORD = 'wrong-Pa55-never-logged';

/** A real `meridian serve` process on SQLite: SIGKILL and start again; and its logs hold no secret. */
describe('connections across a SIGKILL [sqlite]', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'meridian-restart-'));
  let device: ModbusTestServer;
  let opcua: OpcuaTestServer;
  let port: number;
  let env: Record<string, string>;
  const processes: MeridianProcess[] = [];
  let log = '';

  const serve = async () => {
    const process = runMeridian(['serve'], env);
    processes.push(process);
    await process.waitFor(/Meridian ready/, 60_000);
    const client = await new TestClient(`http://127.0.0.1:${port}`).login('admin@localhost', ADMIN_PASSWORD);
    const orgId = (await client.get('/api/v1/auth/session')).body.data.organizations[0].id;
    return { process, client: client.inOrg(orgId) };
  };

  before(async () => {
    device = new ModbusTestServer(await freePort());
    await device.start();
    opcua = new OpcuaTestServer(await freePort());
    await opcua.start();
    port = await freePort();
    env = {
      MERIDIAN_DATA_DIR: dataDir,
      MERIDIAN_KEY_ENCRYPTION_KEY: randomBytes(32).toString('hex'),
      MERIDIAN_ADMIN_PASSWORD: ADMIN_PASSWORD,
      MERIDIAN_HTTP_HOST: '127.0.0.1',
      MERIDIAN_HTTP_PORT: String(port),
      MERIDIAN_MQTT_PORT: '0',
      MERIDIAN_LOG_LEVEL: 'debug',
    };
  });
  after(async () => {
    for (const p of processes) p.child.kill('SIGKILL');
    await device?.stop();
    await opcua?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('brings a running connection back by itself after SIGKILL, and logs no secret', async () => {
    const first = await serve();
    const created = await first.client.post('/api/v1/connections', {
      name: 'Survivor',
      protocol: 'modbus-tcp',
      config: { host: '127.0.0.1', port: device.port },
    });
    assert.equal(created.status, 201, created.text);
    const id = created.body.data.id;
    assert.equal((await first.client.post(`/api/v1/connections/${id}/start`)).status, 202);
    await waitUntil('connected', async () =>
      (await first.client.get(`/api/v1/connections/${id}/runtime`)).body.data.state === 'connected'
        ? true
        : null,
    );

    // A secret that is refused: it travels through connect, error, state history and logs.
    const secure = await first.client.post('/api/v1/connections', {
      name: 'Wrong password',
      protocol: 'opcua',
      config: { endpointUrl: opcua.endpointUrl, username: OPCUA_USER, password: WRONG_PASSWORD },
    });
    await first.client.post(`/api/v1/connections/${secure.body.data.id}/start`);
    const failed = await waitUntil('error', async () => {
      const r = await first.client.get(`/api/v1/connections/${secure.body.data.id}/runtime`);
      return r.body.data.state === 'error' ? r : null;
    });
    assert.ok(!failed.text.includes(WRONG_PASSWORD));
    const history = await first.client.get('/api/v1/connections/state-history');
    assert.ok(!history.text.includes(WRONG_PASSWORD));
    const good = await first.client.post('/api/v1/connections', {
      name: 'Right password',
      protocol: 'opcua',
      config: { endpointUrl: opcua.endpointUrl, username: OPCUA_USER, password: OPCUA_PASSWORD },
    });
    const read = await first.client.post(`/api/v1/connections/${good.body.data.id}/functions`, {
      name: 't',
      type: 'opcua.read',
      config: { nodeId: 'ns=1;s=Press4.Temperature' },
    });
    const value = await first.client.post(
      `/api/v1/connections/${good.body.data.id}/functions/${read.body.data.id}/execute`,
      {},
    );
    assert.equal(value.body.data.success, true, value.text);

    const firstOwner = (await first.client.get(`/api/v1/connections/${id}/runtime`)).body.data.ownerReplica;
    assert.ok(firstOwner);
    first.process.child.kill('SIGKILL');
    await first.process.exited;
    log += first.process.output();
    await waitUntil('the device sees the session end', () => (device.sessions() === 0 ? true : null), 5000);

    const second = await serve();
    const back = await waitUntil(
      'connected again without an API call',
      async () => {
        // The killed replica's last state stands until its lease runs out (then it reads reconnecting);
        // connected again means connected by the new replica, which took the lease over.
        const r = (await second.client.get(`/api/v1/connections/${id}/runtime`)).body.data;
        return r.state === 'connected' && r.ownerReplica !== firstOwner ? r : null;
      },
      20_000,
    );
    assert.equal(back.desiredState, 'running');
    // The device counts the session once its side of the connection is set up, which may follow the
    // state change by a moment on a loaded machine: exactly one, never two.
    await waitUntil('the device sees the session', () => (device.sessions() >= 1 ? true : null), 5000);
    assert.equal(device.sessions(), 1);
    second.process.child.kill('SIGTERM');
    await second.process.exited;
    log += second.process.output();

    assert.match(log, /connection state changed/, 'the logs were captured at debug level');
    for (const secret of [WRONG_PASSWORD, OPCUA_PASSWORD]) {
      assert.ok(!log.includes(secret), `the secret ${secret} appears in the logs`);
    }
  });
});
