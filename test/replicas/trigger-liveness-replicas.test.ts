import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import { testDialects } from '../helpers/dialects.js';
import type { TestClient } from '../helpers/http-client.js';
import { waitUntil } from '../helpers/wait.js';
import { createPat } from '../uns/uns-helpers.js';
import { CLUSTER_ADMIN_PASSWORD, type ReplicaCluster, startReplicaCluster } from './replica-cluster.js';

const PIPELINES = '/api/v1/engine/pipelines';
const ROUNDS = 6;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const echo = { id: 'echo', name: 'Echo', type: 'transform.jsonata', parameters: { expression: '$' } };

/**
 * Issue 45: a trigger made live on replica A is live on replica B from A's answer on. Every value
 * published to B right after A answered starts one execution (never none, never two).
 */
describe('trigger liveness on two replicas [postgres]', {
  skip: !testDialects().includes('postgres'),
}, () => {
  let cluster: ReplicaCluster;
  let a: TestClient;
  let b: TestClient;
  let pool: pg.Pool;

  const topicsRun = async (pipelineId: string) =>
    (await pool.query('select input from engine_executions where pipeline_id = $1', [pipelineId])).rows.map(
      (r) => JSON.parse(r.input).topic as string,
    );
  const publishSixOnB = (base: string) =>
    Promise.all(
      [0, 1, 2, 3, 4, 5].map(async (i) => {
        const res = await b.post('/api/v1/uns/data/publish', { topic: `${base}/v${i}`, value: i });
        assert.equal(res.status, 200, res.text);
      }),
    );
  /** At least one execution for each of the six values (`exactlyOnce` then looks for a second). */
  const sixStarted = async ({ pipelineId, label }: { pipelineId: string; label: string }) => {
    await waitUntil(
      `${label}: six executions`,
      async () => ((await topicsRun(pipelineId)).length >= 6 ? true : undefined),
      5000,
    ).catch(async () => {
      const topics = await topicsRun(pipelineId);
      assert.fail(`${label}: ${topics.length} executions for 6 values published on replica B (${topics})`);
    });
  };
  /** Exactly one execution for each value of every round, once stragglers had time to start. */
  const exactlyOnce = async (rounds: { pipelineId: string; base: string; label: string }[]) => {
    await sleep(300);
    for (const { pipelineId, base, label } of rounds) {
      assert.deepEqual(
        (await topicsRun(pipelineId)).sort(),
        [0, 1, 2, 3, 4, 5].map((i) => `${base}/v${i}`),
        `${label}: one execution per value`,
      );
    }
  };
  const listening = (name: string, filter: string, enabled: boolean) => ({
    name,
    enabled,
    nodes: [{ id: 'in', name: 'In', type: 'trigger.uns', parameters: { filter } }, echo],
    edges: [{ source: 'in', target: 'echo' }],
  });

  before(async () => {
    cluster = await startReplicaCluster(2);
    pool = new pg.Pool({ connectionString: cluster.database.databaseUrl, max: 2 });
    const admin = await cluster.replicas[0]!.client.login('admin@localhost', CLUSTER_ADMIN_PASSWORD);
    const orgId = (await admin.get('/api/v1/auth/session')).body.data.organizations[0].id;
    const token = await createPat(admin.inOrg(orgId), ['pipelines:read', 'pipelines:write', 'uns:publish']);
    [a, b] = cluster.replicas.map((r) => r.client.as({ token, org: orgId })) as [TestClient, TestClient];
  });
  after(async () => {
    await pool?.end();
    await cluster?.stop();
  });

  it(`enable on A, publish at once on B: every value starts one execution (${ROUNDS} rounds)`, async () => {
    const rounds = [];
    for (let round = 0; round < ROUNDS; round++) {
      const base = `v1/replica-enable/r${round}`;
      const made = await a.post(PIPELINES, listening(`Enable on A ${round}`, `${base}/#`, false));
      assert.equal(made.status, 201, made.text);
      rounds.push({ pipelineId: made.body.data.id as string, base, label: `round ${round}` });
    }
    // B has read the disabled pipelines by now: what follows is the change, not the creation.
    await sleep(1200);
    for (const round of rounds) {
      const enabled = await a.post(`${PIPELINES}/${round.pipelineId}/enable`);
      assert.equal(enabled.status, 200, enabled.text);
      await publishSixOnB(round.base);
      await sixStarted(round);
    }
    await exactlyOnce(rounds);
  });

  it(`create enabled on A, publish at once on B: every value starts one execution (${ROUNDS} rounds)`, async () => {
    const rounds = [];
    for (let round = 0; round < ROUNDS; round++) {
      const base = `v1/replica-create/r${round}`;
      const made = await a.post(PIPELINES, listening(`Create on A ${round}`, `${base}/#`, true));
      assert.equal(made.status, 201, made.text);
      await publishSixOnB(base);
      rounds.push({ pipelineId: made.body.data.id as string, base, label: `round ${round}` });
      await sixStarted(rounds[round]!);
    }
    await exactlyOnce(rounds);
  });

  it('a schedule disabled on A fires on neither replica after the answer', async () => {
    const made = await a.post(PIPELINES, {
      name: 'Replica schedule',
      nodes: [
        { id: 'tick', name: 'Tick', type: 'trigger.schedule', parameters: { cron: '* * * * * *' } },
        { id: 'echo', name: 'Echo', type: 'transform.jsonata', parameters: { expression: 'firedAt' } },
      ],
      edges: [{ source: 'tick', target: 'echo' }],
    });
    assert.equal(made.status, 201, made.text);
    const id = made.body.data.id as string;
    const fired = async () =>
      (await pool.query('select trigger from engine_executions where pipeline_id = $1', [id])).rows.map(
        (r) => JSON.parse(r.trigger).firedAt as number,
      );
    for (let round = 0; round < 3; round++) {
      assert.equal((await a.post(`${PIPELINES}/${id}/enable`)).status, 200);
      const enabledAt = Date.now();
      await waitUntil(
        'two fire times',
        async () => ((await fired()).filter((f) => f > enabledAt).length >= 2 ? true : undefined),
        5000,
      );
      assert.equal((await b.post(`${PIPELINES}/${id}/disable`)).status, 200);
      const disabledAt = Date.now();
      await sleep(2500);
      assert.deepEqual(
        (await fired()).filter((f) => f >= disabledAt).map((f) => new Date(f).toISOString()),
        [],
        `round ${round}: fired after the disable answered`,
      );
    }
  });
});
