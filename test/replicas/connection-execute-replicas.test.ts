import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ModbusTestServer } from '../connections/modbus-test-server.js';
import { freePort } from '../helpers/free-port.js';
import type { TestClient } from '../helpers/http-client.js';
import { waitUntil } from '../helpers/wait.js';
import { CLUSTER_ADMIN_PASSWORD, type ReplicaCluster, startReplicaCluster } from './replica-cluster.js';

/** Two Meridian processes on one PostgreSQL: an execute through the replica that does not run the connection. */
describe('executing a function through another replica [postgres]', () => {
  let cluster: ReplicaCluster;
  let device: ModbusTestServer;
  const clients: TestClient[] = [];

  before(async () => {
    device = new ModbusTestServer(await freePort());
    await device.start();
    device.holding[7] = 4321;
    cluster = await startReplicaCluster(2);
    for (const replica of cluster.replicas) {
      const signedIn = await replica.client.login('admin@localhost', CLUSTER_ADMIN_PASSWORD);
      const orgId = (await signedIn.get('/api/v1/auth/session')).body.data.organizations[0].id;
      clients.push(signedIn.inOrg(orgId));
    }
  });
  after(async () => {
    for (const r of cluster?.replicas ?? []) r.process.child.kill('SIGCONT');
    await cluster?.stop().catch(() => {});
    await device?.stop();
  });

  it('goes to the owner, so the device sees one session; opens its own when the owner does not answer', async () => {
    const [a] = clients as [TestClient, TestClient];
    const created = await a.post('/api/v1/connections', {
      name: 'One session PLC',
      protocol: 'modbus-tcp',
      config: { host: '127.0.0.1', port: device.port, timeoutMs: 1000 },
    });
    assert.equal(created.status, 201, created.text);
    const id = created.body.data.id as string;
    const fn = await a.post(`/api/v1/connections/${id}/functions`, {
      name: 'counter',
      type: 'modbus.readHoldingRegisters',
      config: { address: 7 },
    });
    assert.equal(fn.status, 201, fn.text);
    assert.equal((await a.post(`/api/v1/connections/${id}/start`)).status, 202);
    const owner = await waitUntil('connected on one replica', async () => {
      const r = (await a.get(`/api/v1/connections/${id}/runtime`)).body.data;
      return r.state === 'connected' ? (r.ownerReplica as string) : null;
    });
    const ownerIndex = cluster.replicas.findIndex((r) =>
      r.process.output().includes(`"replicaId":"${owner}"`),
    );
    assert.ok(ownerIndex >= 0, `the owner ${owner} is one of the replicas`);
    const other = clients[1 - ownerIndex]!;
    const otherProcess = cluster.replicas[1 - ownerIndex]!.process;
    const ownerProcess = cluster.replicas[ownerIndex]!.process;
    assert.equal(device.opened, 1);
    const requestsBefore = (await other.get(`/api/v1/connections/${id}/runtime`)).body.data.metrics
      .requests as number;

    // Through the replica that does not run it: answered on the owner's session, none opened.
    for (let i = 0; i < 5; i++) {
      device.holding[7] = 4321 + i;
      const res = await other.post(`/api/v1/connections/${id}/functions/${fn.body.data.id}/execute`, {});
      assert.equal(res.status, 200, res.text);
      assert.equal(res.body.data.success, true, res.text);
      assert.equal(res.body.data.value, 4321 + i);
    }
    assert.equal(device.opened, 1, 'no session opened besides the owner');
    assert.equal(device.sessions(), 1);
    // The owner counted them (its metrics reach the other replica with its next heartbeat).
    await waitUntil('the owner counted the forwarded requests', async () => {
      const metrics = (await other.get(`/api/v1/connections/${id}/runtime`)).body.data.metrics;
      return metrics.requests >= requestsBefore + 5 ? true : null;
    });

    // The owner stops answering (paused, its lease still valid): the other replica opens its own session.
    ownerProcess.child.kill('SIGSTOP');
    try {
      device.holding[7] = 99;
      const res = await other.post(`/api/v1/connections/${id}/functions/${fn.body.data.id}/execute`, {});
      assert.equal(res.status, 200, res.text);
      assert.equal(res.body.data.success, true, res.text);
      assert.equal(res.body.data.value, 99);
    } finally {
      ownerProcess.child.kill('SIGCONT');
    }
    assert.equal(device.opened, 2, 'one session of its own for the call');
    assert.match(otherProcess.output(), /the owner replica did not take the execute/);
    await waitUntil('the call session closed', () => (device.sessions() === 1 ? true : null), 5000);
  });
});
