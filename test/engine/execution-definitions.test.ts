import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { testDialects } from '../helpers/dialects.js';
import type { TestClient } from '../helpers/http-client.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';
import { createPat } from '../uns/uns-helpers.js';
import { allNodeRuns, EXECUTIONS, execute, executionIn, manual, PIPELINES } from './engine-helpers.js';

/** A pipeline's definition is stored once per version (migration 0022), not in every execution row. */
for (const dialect of testDialects()) {
  describe(`Execution definitions [${dialect}]`, () => {
    let server: TestServer;
    let api: TestClient;

    before(async () => {
      server = await startTestServer(dialect);
      const token = await createPat(server.admin, ['pipelines:read', 'pipelines:write']);
      api = server.client.as({ token, org: server.orgId });
    });
    after(() => server?.close());

    const pipelineWith = async (name: string, expression: string) => {
      const res = await api.post(PIPELINES, {
        name,
        // Node outputs kept, to tell which definition ran.
        settings: { historyDetail: 'full' },
        nodes: [manual, { id: 'f', name: 'F', type: 'transform.jsonata', parameters: { expression } }],
        edges: [{ source: 'start', target: 'f' }],
      });
      assert.equal(res.status, 201, res.text);
      return res.body.data as {
        id: string;
        version: number;
        name: string;
        nodes: unknown[];
        edges: unknown[];
      };
    };
    const outputOf = async (executionId: string) => {
      const done = await executionIn(api, executionId);
      assert.equal(done.status, 'completed', JSON.stringify(done));
      return (await allNodeRuns(api, executionId)).find((r) => r.nodeId === 'f')!.output;
    };
    const storedDefinitions = (pipelineId: string) =>
      server.storage.db
        .selectFrom('engine_definitions')
        .select(['pipeline_version', 'definition'])
        .where('pipeline_id', '=', pipelineId)
        .orderBy('pipeline_version')
        .execute();

    it('stores a version once for all its executions; each execution runs the version it was queued with', async () => {
      const pipeline = await pipelineWith('Once per version', '"first"');
      const first = await Promise.all([1, 2, 3].map(() => execute(api, pipeline.id)));
      for (const id of first) assert.equal(await outputOf(id), 'first');
      const changed = await api.put(`${PIPELINES}/${pipeline.id}`, {
        name: pipeline.name,
        nodes: [
          manual,
          { id: 'f', name: 'F', type: 'transform.jsonata', parameters: { expression: '"second"' } },
        ],
        edges: pipeline.edges,
        settings: { historyDetail: 'full' },
        version: pipeline.version,
      });
      assert.equal(changed.status, 200, changed.text);
      const second = await execute(api, pipeline.id);
      assert.equal(await outputOf(second), 'second');

      const stored = await storedDefinitions(pipeline.id);
      assert.deepEqual(
        stored.map((s) => Number(s.pipeline_version)),
        [pipeline.version, changed.body.data.version],
      );
      const expressionOf = (text: string) =>
        (JSON.parse(text) as { nodes: { id: string; parameters: { expression?: string } }[] }).nodes.find(
          (n) => n.id === 'f',
        )!.parameters.expression;
      assert.deepEqual(
        stored.map((s) => expressionOf(s.definition)),
        ['"first"', '"second"'],
      );
      const rows = await server.storage.db
        .selectFrom('engine_executions')
        .select(['definition'])
        .where('pipeline_id', '=', pipeline.id)
        .execute();
      assert.equal(rows.length, 4);
      assert.ok(
        rows.every((r) => r.definition === ''),
        'no execution row carries a copy',
      );
      // Views and lists read them back with their version's definition.
      const listed = await api.get(`${EXECUTIONS}?pipelineId=${pipeline.id}`);
      assert.equal(listed.status, 200, listed.text);
      assert.equal(listed.body.data.length, 4);
    });

    it('runs and shows an execution queued before 0022, whose row holds its own definition', async () => {
      const pipeline = await pipelineWith('From before', '"current"');
      const id = randomUUID();
      const now = Date.now();
      // As such a row was written: the definition inline, and none in engine_definitions for its version.
      await server.storage.db
        .insertInto('engine_executions')
        .values({
          id,
          organization_id: server.orgId,
          pipeline_id: pipeline.id,
          pipeline_version: pipeline.version + 100,
          definition: JSON.stringify({
            nodes: [
              manual,
              { id: 'f', name: 'F', type: 'transform.jsonata', parameters: { expression: '"inline"' } },
            ],
            edges: pipeline.edges,
            settings: (await api.get(`${PIPELINES}/${pipeline.id}`)).body.data.settings,
          }),
          status: 'queued',
          reason: null,
          trigger: JSON.stringify({ type: 'manual', nodeId: 'start', firedAt: now, source: {} }),
          input: null,
          error: null,
          priority: 1,
          run_at: now,
          locked_by: null,
          lease_until: null,
          claims: 0,
          idempotency_key: null,
          retry_of: null,
          queued_at: now,
          started_at: null,
          finished_at: null,
          checkpoint: null,
          trigger_type: 'manual',
        })
        .execute();
      server.app.engine.wake();
      assert.equal(await outputOf(id), 'inline');
      assert.equal((await storedDefinitions(pipeline.id)).length, 0, 'nothing was moved or added for it');
      const view = await api.get(`${EXECUTIONS}/${id}`);
      assert.equal(view.status, 200, view.text);
      assert.equal(view.body.data.pipelineVersion, pipeline.version + 100);
    });
  });
}
