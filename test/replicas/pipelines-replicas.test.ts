import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import { testDialects } from '../helpers/dialects.js';
import type { TestClient } from '../helpers/http-client.js';
import { runMeridian } from '../helpers/process.js';
import { waitUntil } from '../helpers/wait.js';
import { createPat } from '../uns/uns-helpers.js';
import { CLUSTER_ADMIN_PASSWORD, type ReplicaCluster, startReplicaCluster } from './replica-cluster.js';

const PIPELINES = '/api/v1/engine/pipelines';
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Pipelines on two `meridian serve` processes sharing one PostgreSQL: a schedule fires once per fire time,
 * a UNS value starts a listening pipeline once whichever replica it was published to, and a SIGKILL in
 * the middle of executions loses none of them.
 */
describe('pipelines on two replicas [postgres]', { skip: !testDialects().includes('postgres') }, () => {
  let cluster: ReplicaCluster;
  let clients: TestClient[];
  let pool: pg.Pool;

  const executions = async (pipelineId: string) =>
    (
      await pool.query(
        'select id, status, reason, input, trigger, claims from engine_executions where pipeline_id = $1',
        [pipelineId],
      )
    ).rows.map((r) => ({ ...r, input: r.input && JSON.parse(r.input), trigger: JSON.parse(r.trigger) }));
  const allFinished = (pipelineId: string, count: number, timeoutMs = 30_000) =>
    waitUntil(
      `${count} finished executions`,
      async () => {
        const rows = await executions(pipelineId);
        return rows.length >= count && rows.every((r) => !['queued', 'running'].includes(r.status))
          ? rows
          : null;
      },
      timeoutMs,
    );
  const create = async (body: Record<string, unknown>) => {
    const res = await clients[0]!.post(PIPELINES, body);
    assert.equal(res.status, 201, res.text);
    return res.body.data.id as string;
  };

  before(async () => {
    cluster = await startReplicaCluster(2);
    pool = new pg.Pool({ connectionString: cluster.database.databaseUrl, max: 2 });
    const admin = await cluster.replicas[0]!.client.login('admin@localhost', CLUSTER_ADMIN_PASSWORD);
    const orgId = (await admin.get('/api/v1/auth/session')).body.data.organizations[0].id;
    const token = await createPat(admin.inOrg(orgId), ['pipelines:read', 'pipelines:write', 'uns:publish']);
    clients = cluster.replicas.map((r) => r.client.as({ token, org: orgId }));
  });
  after(async () => {
    await pool?.end();
    await cluster?.stop();
  });

  it('a per-second schedule for 10 s gives exactly 10 executions', async () => {
    // Ten fire times within one minute, starting a few seconds from now (UTC).
    let start = new Date(Math.ceil(Date.now() / 1000) * 1000 + 4000);
    if (start.getUTCSeconds() > 50) start = new Date(start.getTime() + (60 - start.getUTCSeconds()) * 1000);
    const s = start.getUTCSeconds();
    const cron = `${s}-${s + 9} ${start.getUTCMinutes()} ${start.getUTCHours()} * * *`;
    const id = await create({
      name: 'Ten seconds',
      enabled: true,
      nodes: [
        { id: 'tick', name: 'Tick', type: 'trigger.schedule', parameters: { cron, timezone: 'UTC' } },
        { id: 'echo', name: 'Echo', type: 'transform.jsonata', parameters: { expression: 'firedAt' } },
      ],
      edges: [{ source: 'tick', target: 'echo' }],
    });
    await sleep(start.getTime() + 10_000 - Date.now() + 3000);
    const rows = await allFinished(id, 10);
    assert.equal(rows.length, 10, `${rows.length} executions for 10 fire times`);
    const fired = rows.map((r) => r.trigger.firedAt as number).sort((x, y) => x - y);
    assert.deepEqual(
      fired,
      Array.from({ length: 10 }, (_, i) => start.getTime() + i * 1000),
    );
    assert.ok(
      rows.every((r) => r.status === 'completed'),
      JSON.stringify(rows.map((r) => r.status)),
    );
  });

  it('a UNS-triggered pipeline runs once per value, values published to either replica', async () => {
    const id = await create({
      name: 'Per value',
      enabled: true,
      settings: { concurrency: { mode: 'parallel', max: 4 } },
      nodes: [
        { id: 'in', name: 'In', type: 'trigger.uns', parameters: { filter: 'v1/replicas/+/count' } },
        { id: 'echo', name: 'Echo', type: 'transform.jsonata', parameters: { expression: 'value' } },
      ],
      edges: [{ source: 'in', target: 'echo' }],
    });
    // Live on both replicas from the 201 on (trigger-liveness-replicas.test.ts): published at once.
    const N = 60;
    for (let i = 0; i < N; i++) {
      const res = await clients[i % 2]!.post('/api/v1/uns/data/publish', {
        topic: `v1/replicas/line${i % 3}/count`,
        value: i,
      });
      assert.equal(res.status, 200, res.text);
    }
    const rows = await allFinished(id, N);
    await sleep(1500);
    const final = await executions(id);
    assert.equal(final.length, N, 'one execution per value, none twice');
    assert.deepEqual(
      final.map((r) => r.input.value).sort((x: number, y: number) => x - y),
      Array.from({ length: N }, (_, i) => i),
    );
    assert.ok(rows.every((r) => r.status === 'completed'));
  });

  it('SIGKILL during executions, restart: every acknowledged value still runs, once', async (t) => {
    const id = await create({
      name: 'Survives a kill',
      enabled: true,
      settings: { concurrency: { mode: 'parallel', max: 2 }, historyDetail: 'full' },
      nodes: [
        { id: 'in', name: 'In', type: 'trigger.uns', parameters: { filter: 'v1/kill/in' } },
        {
          id: 'busy',
          name: 'Busy',
          type: 'code.javascript',
          parameters: {
            code: 'const end = Date.now() + 150; while (Date.now() < end) {} return $input.value;',
          },
        },
        {
          id: 'out',
          name: 'Out',
          type: 'uns.publish',
          parameters: { topic: 'v1/kill/out', value: '{{ $ }}' },
        },
      ],
      edges: [
        { source: 'in', target: 'busy' },
        { source: 'busy', target: 'out' },
      ],
    });
    const N = 30;
    // Every value acknowledged (200) by replica 0 before it is killed.
    for (let i = 0; i < N; i++) {
      const res = await clients[0]!.post('/api/v1/uns/data/publish', { topic: 'v1/kill/in', value: i });
      assert.equal(res.status, 200, res.text);
    }
    await waitUntil('executions running', async () =>
      (await executions(id)).some((r) => r.status === 'running') ? true : null,
    );
    const killed = cluster.replicas[0]!;
    killed.process.child.kill('SIGKILL');
    await killed.process.exited;
    const before = await executions(id);
    assert.equal(before.length, N, 'every acknowledged value was queued before the kill');
    assert.ok(
      before.some((r) => ['queued', 'running'].includes(r.status)),
      'the kill came while executions were unfinished',
    );
    // Restart the killed replica on the same port; executions it held resume once their lease expires.
    const port = new URL(killed.url).port;
    const restarted = runMeridian(['serve'], { ...cluster.env, MERIDIAN_HTTP_PORT: port });
    cluster.replicas[0] = { ...killed, process: restarted };
    await restarted.waitFor(/Meridian ready/, 60_000);
    const rows = await allFinished(id, N, 90_000);
    assert.equal(rows.length, N);
    assert.deepEqual(
      rows.map((r) => r.input.value).sort((x: number, y: number) => x - y),
      Array.from({ length: N }, (_, i) => i),
    );
    assert.ok(
      rows.every((r) => r.status === 'completed'),
      JSON.stringify(rows.map((r) => r.status)),
    );
    t.diagnostic(`${rows.filter((r) => Number(r.claims) > 1).length} executions resumed after the kill`);
  });
});
