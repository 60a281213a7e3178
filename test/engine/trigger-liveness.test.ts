import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { exportBundle, IMPORT, validate } from '../dependencies/bundle-helpers.js';
import { testDialects } from '../helpers/dialects.js';
import { buildOrganization, signedInMember } from '../helpers/factories.js';
import type { TestClient } from '../helpers/http-client.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';
import { waitUntil } from '../helpers/wait.js';
import { createPat } from '../uns/uns-helpers.js';

const PIPELINES = '/api/v1/engine/pipelines';
const MAINTENANCE = '/api/v1/organizations/settings/maintenance';
const ROUNDS = 25;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const echo = { id: 'echo', name: 'Echo', type: 'transform.jsonata', parameters: { expression: '$' } };
const listening = (name: string, filter: string, enabled: boolean) => ({
  name,
  enabled,
  nodes: [{ id: 'in', name: 'In', type: 'trigger.uns', parameters: { filter } }, echo],
  edges: [{ source: 'in', target: 'echo' }],
});
const everySecond = (name: string) => ({
  name,
  nodes: [
    { id: 'tick', name: 'Tick', type: 'trigger.schedule', parameters: { cron: '* * * * * *' } },
    { id: 'echo', name: 'Echo', type: 'transform.jsonata', parameters: { expression: 'firedAt' } },
  ],
  edges: [{ source: 'tick', target: 'echo' }],
});

/**
 * "Enabled" means live from the answer on (issue 45): a value published right after the answer that
 * made a trigger live starts its execution, exactly once; a schedule fires from its first fire time after
 * an enable and never after a disable answered; a manual run in maintenance is recorded as skipped
 * unless an Owner or Admin forces it.
 */
for (const dialect of testDialects()) {
  describe(`Triggers are live from the answer on [${dialect}]`, () => {
    let server: TestServer;
    let api: TestClient;

    const executionsOf = async (pipelineId: string) =>
      (
        await server.storage.db
          .selectFrom('engine_executions')
          .selectAll()
          .where('pipeline_id', '=', pipelineId)
          .orderBy('queued_at')
          .execute()
      ).map((r) => ({ ...r, input: r.input && JSON.parse(r.input), trigger: JSON.parse(r.trigger) }));
    const publishSix = (base: string, client: TestClient = api) =>
      Promise.all(
        [0, 1, 2, 3, 4, 5].map(async (i) => {
          const res = await client.post('/api/v1/uns/data/publish', { topic: `${base}/v${i}`, value: i });
          assert.equal(res.status, 200, res.text);
        }),
      );
    /** At least one execution for each of the six values (`exactlyOnce` then looks for a second). */
    const sixStarted = async ({ pipelineId, label }: { pipelineId: string; label: string }) => {
      await waitUntil(
        `${label}: six executions`,
        async () => ((await executionsOf(pipelineId)).length >= 6 ? true : undefined),
        5000,
      ).catch(async () => {
        const rows = await executionsOf(pipelineId);
        assert.fail(`${label}: ${rows.length} executions for 6 values (${rows.map((r) => r.input.topic)})`);
      });
    };
    /**
     * Exactly one execution for each of the six values of every round, once stragglers had time to
     * start (one wait for all the rounds of a test: a second execution would start within it).
     */
    const exactlyOnce = async (rounds: { pipelineId: string; base: string; label: string }[]) => {
      await sleep(300);
      for (const { pipelineId, base, label } of rounds) {
        const topics = (await executionsOf(pipelineId)).map((r) => r.input.topic).sort();
        assert.deepEqual(
          topics,
          [0, 1, 2, 3, 4, 5].map((i) => `${base}/v${i}`),
          `${label}: one execution per value`,
        );
      }
    };

    before(async () => {
      server = await startTestServer(dialect);
      const token = await createPat(server.admin, ['pipelines:read', 'pipelines:write', 'uns:publish']);
      api = server.client.as({ token, org: server.orgId });
    });
    after(() => server?.close());

    it(`a pipeline created enabled starts an execution for each value published right after its 201 (${ROUNDS} rounds)`, async () => {
      const rounds = [];
      for (let round = 0; round < ROUNDS; round++) {
        const base = `v1/live-create/r${round}`;
        const res = await api.post(PIPELINES, listening(`Live on create ${round}`, `${base}/#`, true));
        assert.equal(res.status, 201, res.text);
        await publishSix(base);
        rounds.push({ pipelineId: res.body.data.id, base, label: `round ${round}` });
        await sixStarted(rounds[round]!);
      }
      await exactlyOnce(rounds);
    });

    it(`a pipeline enabled by POST .../enable starts an execution for each value published right after its 200 (${ROUNDS} rounds)`, async () => {
      const rounds = [];
      for (let round = 0; round < ROUNDS; round++) {
        const base = `v1/live-enable/r${round}`;
        const made = await api.post(PIPELINES, listening(`Live on enable ${round}`, `${base}/#`, false));
        assert.equal(made.status, 201, made.text);
        const enabled = await api.post(`${PIPELINES}/${made.body.data.id}/enable`);
        assert.equal(enabled.status, 200, enabled.text);
        await publishSix(base);
        rounds.push({ pipelineId: made.body.data.id, base, label: `round ${round}` });
        await sixStarted(rounds[round]!);
      }
      await exactlyOnce(rounds);
    });

    it('a pipeline imported with activate starts an execution for each value published right after the import answered (5 rounds)', async () => {
      const rounds = [];
      for (let round = 0; round < 5; round++) {
        const base = `v1/live-import/r${round}`;
        const made = await api.post(PIPELINES, listening(`Live on import ${round}`, `${base}/#`, true));
        assert.equal(made.status, 201, made.text);
        const { bundle } = await exportBundle(server.admin, {
          select: [{ type: 'pipeline', id: made.body.data.id }],
        });
        const target = server.admin.inOrg(await buildOrganization(server));
        const plan = await validate(target, bundle, { activate: true });
        assert.equal(plan.canExecute, true, JSON.stringify(plan.problems));
        const done = await target.post(`${IMPORT}/execute`, { planId: plan.planId });
        assert.equal(done.status, 201, done.text);
        await publishSix(base, target);
        const pipelineId = done.body.data.idMap[`pipeline:Live on import ${round}`];
        rounds.push({ pipelineId, base, label: `round ${round}` });
        await sixStarted(rounds[round]!);
      }
      await exactlyOnce(rounds);
    });

    it('a schedule fires from its first fire time after the enable, and never after the disable answered (three pipelines at once)', async () => {
      // Three rounds side by side, a third of a second apart (enabled at different points of a second):
      // each waits about four seconds on the clock, which the others share.
      const round = async (round: number) => {
        await sleep(round * 333);
        const made = await api.post(PIPELINES, everySecond(`Schedule liveness ${round}`));
        assert.equal(made.status, 201, made.text);
        const id = made.body.data.id as string;
        const enabled = await api.post(`${PIPELINES}/${id}/enable`);
        assert.equal(enabled.status, 200, enabled.text);
        const enabledAt = Date.now();
        // The first whole second after the answer is a fire time: it must not be skipped.
        const firstFire = Math.floor(enabledAt / 1000) * 1000 + 1000;
        await waitUntil(
          'a fire time after the first one',
          async () =>
            (await executionsOf(id)).some((r) => r.trigger.firedAt > firstFire) ? true : undefined,
          5000,
        );
        const fired = (await executionsOf(id)).map((r) => r.trigger.firedAt as number);
        assert.ok(
          fired.includes(firstFire),
          `round ${round}: the first fire time ${new Date(firstFire).toISOString()} after the enable was skipped (fired ${fired.map((f) => new Date(f).toISOString())})`,
        );
        const disabled = await api.post(`${PIPELINES}/${id}/disable`);
        assert.equal(disabled.status, 200, disabled.text);
        const disabledAt = Date.now();
        await sleep(2500);
        const late = (await executionsOf(id)).filter((r) => r.trigger.firedAt >= disabledAt);
        assert.deepEqual(
          late.map((r) => new Date(r.trigger.firedAt).toISOString()),
          [],
          `round ${round}: fired after the disable answered`,
        );
      };
      await Promise.all([0, 1, 2].map(round));
    });

    describe('Run now in maintenance', () => {
      let pipelineId: string;
      let adminMember: TestClient;
      let editor: TestClient;

      before(async () => {
        const made = await api.post(PIPELINES, {
          name: 'Run now in maintenance',
          nodes: [{ id: 'start', name: 'Start', type: 'trigger.manual' }, echo],
          edges: [{ source: 'start', target: 'echo' }],
        });
        assert.equal(made.status, 201, made.text);
        pipelineId = made.body.data.id;
        adminMember = (await signedInMember(server, 'Admin')).client;
        editor = (await signedInMember(server, 'Editor')).client;
        const on = await server.admin.post(MAINTENANCE, { enabled: true, reason: 'line 4 retrofit' });
        assert.equal(on.status, 200, on.text);
      });
      after(async () => {
        await server.admin.post(MAINTENANCE, { enabled: false, reason: 'retrofit done' });
      });

      it('answers 202 with an execution recorded as skipped, reason maintenance, that never runs', async () => {
        for (const caller of [api, editor]) {
          const res = await caller.post(`${PIPELINES}/${pipelineId}/execute`, { input: { n: 1 } });
          assert.equal(res.status, 202, res.text);
          assert.equal(res.body.data.status, 'skipped');
          assert.equal(res.body.data.reason, 'maintenance');
          await sleep(300);
          const row = (await executionsOf(pipelineId)).find((r) => r.id === res.body.data.id)!;
          assert.equal(row.status, 'skipped');
          assert.equal(row.started_at, null, 'a skipped execution never ran');
        }
      });

      it('runs with {"force": true} from an Owner or Admin', async () => {
        for (const caller of [server.admin, adminMember]) {
          const res = await caller.post(`${PIPELINES}/${pipelineId}/execute`, {
            input: { n: 2 },
            force: true,
          });
          assert.equal(res.status, 202, res.text);
          assert.notEqual(res.body.data.status, 'skipped');
          const done = await waitUntil('the forced run completes', async () => {
            const row = (await executionsOf(pipelineId)).find((r) => r.id === res.body.data.id);
            return row && row.status === 'completed' ? row : undefined;
          });
          assert.deepEqual(done.input, { n: 2 });
        }
      });

      it('refuses {"force": true} from a lower role with 403 and records nothing', async () => {
        const before = (await executionsOf(pipelineId)).length;
        const res = await editor.post(`${PIPELINES}/${pipelineId}/execute`, { force: true });
        assert.equal(res.status, 403, res.text);
        assert.equal(res.body.error, 'insufficient_scope');
        assert.match(res.body.message, /Owner or Admin/);
        assert.equal((await executionsOf(pipelineId)).length, before, 'nothing recorded');
      });

      it('refuses a force that is not a boolean with 400', async () => {
        const res = await server.admin.post(`${PIPELINES}/${pipelineId}/execute`, { force: 'yes' });
        assert.equal(res.status, 400, res.text);
      });
    });
  });
}
