import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { freePort } from '../helpers/free-port.js';
import type { TestClient } from '../helpers/http-client.js';
import { waitUntil } from '../helpers/wait.js';
import {
  CLUSTER_ADMIN_PASSWORD,
  type ReplicaCluster,
  startReplicaCluster,
} from '../replicas/replica-cluster.js';
import { ModbusTestServer } from './modbus-test-server.js';

/** Two Meridian processes on one PostgreSQL: one session per connection, failover when the owner dies. */
describe('connections on two replicas [postgres]', () => {
  let cluster: ReplicaCluster;
  let device: ModbusTestServer;
  const clients: TestClient[] = [];

  before(async () => {
    device = new ModbusTestServer(await freePort());
    await device.start();
    device.holding[0] = 1234;
    cluster = await startReplicaCluster(2);
    for (const replica of cluster.replicas) {
      const signedIn = await replica.client.login('admin@localhost', CLUSTER_ADMIN_PASSWORD);
      const orgId = (await signedIn.get('/api/v1/auth/session')).body.data.organizations[0].id;
      clients.push(signedIn.inOrg(orgId));
    }
  });
  after(async () => {
    await cluster?.stop().catch(() => {});
    await device?.stop();
  });

  it('runs a connection on exactly one replica and fails over within 15 s when the owner is killed', async () => {
    const [a, b] = clients as [TestClient, TestClient];
    const created = await a.post('/api/v1/connections', {
      name: 'Shared PLC',
      protocol: 'modbus-tcp',
      config: { host: '127.0.0.1', port: device.port, timeoutMs: 1000 },
    });
    assert.equal(created.status, 201, created.text);
    const id = created.body.data.id;
    const fn = await a.post(`/api/v1/connections/${id}/functions`, {
      name: 'counter',
      type: 'modbus.readHoldingRegisters',
      config: { address: 0 },
      uns: { topic: 'v1/replicas/plc/counter', intervalMs: 200 },
    });
    assert.equal(fn.status, 201, fn.text);
    await b.post(`/api/v1/connections/${id}/start`);
    await a.post(`/api/v1/connections/${id}/start`);
    const owner = await waitUntil('connected on one replica', async () => {
      const r = (await b.get(`/api/v1/connections/${id}/runtime`)).body.data;
      return r.state === 'connected' ? r.ownerReplica : null;
    });
    // Several ticks pass: still one session on the device.
    for (let i = 0; i < 10; i++) {
      await new Promise((resolve) => setTimeout(resolve, 300));
      assert.equal(device.sessions(), 1, 'one session on the device');
    }

    // A function executed through either replica is answered.
    for (const client of [a, b]) {
      const res = await client.post(`/api/v1/connections/${id}/functions/${fn.body.data.id}/execute`, {});
      assert.equal(res.body.data.success, true, res.text);
      assert.equal(res.body.data.value, 1234);
    }

    const ownerIndex = cluster.replicas.findIndex((r) =>
      r.process.output().includes(`"replicaId":"${owner}"`),
    );
    assert.ok(ownerIndex >= 0, `the owner ${owner} is one of the replicas`);
    const survivor = clients[1 - ownerIndex]!;
    const killedAt = Date.now();
    cluster.replicas[ownerIndex]!.process.child.kill('SIGKILL');
    await cluster.replicas[ownerIndex]!.process.exited;
    const takenOver = await waitUntil(
      'the survivor connected',
      async () => {
        const r = (await survivor.get(`/api/v1/connections/${id}/runtime`)).body.data;
        return r.state === 'connected' && r.ownerReplica !== owner ? r : null;
      },
      20_000,
    );
    const failoverMs = Date.now() - killedAt;
    assert.ok(failoverMs < 15_000, `failover took ${failoverMs} ms`);
    assert.notEqual(takenOver.ownerReplica, owner);
    await waitUntil('one session again', () => (device.sessions() === 1 ? true : null), 5000);
    const history = await survivor.get(`/api/v1/connections/state-history?connectionId=${id}`);
    assert.ok(
      history.body.data.some((e: { reason: string }) => e.reason === 'lease_takeover'),
      JSON.stringify(history.body.data),
    );
    // The surviving process stops cleanly (the cluster's stop waits for every process).
    cluster.replicas.splice(ownerIndex, 1);
  });
});
