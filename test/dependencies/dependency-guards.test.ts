import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { testDialects } from '../helpers/dialects.js';
import type { TestClient } from '../helpers/http-client.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';
import { buildConfiguration, GRAPH, keysOf, storedEdges } from './graph-fixture.js';

const k = (type: string, e: { id: string }) => `${type}:${e.id}`;
let n = 0;

for (const dialect of testDialects()) {
  describe(`Dependency graph: refused deletes and stops, edges that follow every save [${dialect}]`, () => {
    let server: TestServer;
    let api: TestClient;
    const fresh = () => buildConfiguration(server, api, ` ${++n}`);
    const severities = (body: { impact: { affected: { entity: { key: string }; severity: string }[] } }) =>
      Object.fromEntries(body.impact.affected.map((a) => [a.entity.key, a.severity]));
    const dependents = async (type: string, id: string) =>
      keysOf((await api.get(`${GRAPH}/${type}/${id}/dependents?transitive=true`)).body.data);
    const enable = (...ids: string[]) =>
      server.storage.db.updateTable('pipelines').set({ enabled: 1 }).where('id', 'in', ids).execute();

    before(async () => {
      server = await startTestServer(dialect);
      api = server.admin;
    });
    after(() => server?.close());

    it('refuses to delete a connection others depend on (409 with the impact) until forced', async () => {
      const { C, F, P, D } = await fresh();
      const before = await storedEdges(server, server.orgId);
      const refused = await api.delete(`/api/v1/connections/${C.id}`);
      assert.equal(refused.status, 409, refused.text);
      assert.equal(refused.body.error, 'conflict');
      assert.match(refused.body.message, /pipeline 'Average \d+' \(breaks\).*force=true/);
      assert.equal(severities(refused.body)[k('pipeline', P)], 'breaks');
      assert.equal(severities(refused.body)[k('dashboard', D)], 'degrades');
      assert.equal(refused.body.impact.blocking, true);
      assert.equal((await api.get(`/api/v1/connections/${C.id}`)).status, 200);
      assert.deepEqual(await storedEdges(server, server.orgId), before, 'nothing changed');

      assert.equal((await api.delete(`/api/v1/connections/${C.id}?force=true`)).status, 204);
      const after = await storedEdges(server, server.orgId);
      assert.ok(!after.some((e) => e.startsWith(`function:${F.id}`)), "the functions' edges went with them");
      // P still names the connection: the graph shows it as missing.
      const g = await api.get(`${GRAPH}?focus=pipeline:${P.id}&depth=1`);
      assert.equal(
        g.body.data.nodes.find((x: { key: string }) => x.key === k('connection', C)).missing,
        true,
      );
      assert.equal((await api.delete(`/api/v1/connections/${C.id}?force=maybe`)).status, 400);
    });

    it('deletes a connection only a disabled pipeline uses, and an unused one, without force', async () => {
      const { C2 } = await fresh();
      assert.equal((await api.delete(`/api/v1/connections/${C2.id}`)).status, 204);
      const lone = await api.post('/api/v1/connections', {
        name: `Lone ${n}`,
        protocol: 'modbus-tcp',
        config: { host: '127.0.0.1', port: 1 },
      });
      await api.post('/api/v1/engine/pipelines', {
        name: `Off ${n}`,
        nodes: [
          {
            id: 'c',
            name: 'Call',
            type: 'connection.call',
            parameters: { connectionId: lone.body.data.id, functionId: lone.body.data.id },
          },
        ],
        edges: [],
      });
      assert.equal((await api.delete(`/api/v1/connections/${lone.body.data.id}`)).status, 204);
    });

    it('refuses to stop a running connection others depend on; stopping a stopped one is not checked', async () => {
      const { C, C2 } = await fresh();
      assert.equal((await api.post(`/api/v1/connections/${C2.id}/stop`)).status, 202, 'already stopped');
      assert.equal((await api.post(`/api/v1/connections/${C.id}/start`)).status, 202);
      const refused = await api.post(`/api/v1/connections/${C.id}/stop`);
      assert.equal(refused.status, 409, refused.text);
      assert.match(refused.body.message, /send force=true to stop it/);
      const row = await server.storage.db
        .selectFrom('connections')
        .select('desired_state')
        .where('id', '=', C.id)
        .executeTakeFirstOrThrow();
      assert.equal(row.desired_state, 'running');
      const forced = await api.post(`/api/v1/connections/${C.id}/stop?force=true`);
      assert.equal(forced.status, 202, forced.text);
      const stopped = await server.storage.db
        .selectFrom('connections')
        .select('desired_state')
        .where('id', '=', C.id)
        .executeTakeFirstOrThrow();
      assert.equal(stopped.desired_state, 'stopped');
    });

    it('refuses to delete a function an enabled pipeline calls until forced', async () => {
      const { C, F, F2, P } = await fresh();
      const refused = await api.delete(`/api/v1/connections/${C.id}/functions/${F.id}`);
      assert.equal(refused.status, 409, refused.text);
      assert.equal(severities(refused.body)[k('pipeline', P)], 'breaks');
      assert.equal((await api.get(`/api/v1/connections/${C.id}/functions/${F.id}`)).status, 200);
      assert.equal((await api.delete(`/api/v1/connections/${C.id}/functions/${F2.id}`)).status, 204);
      assert.equal(
        (await api.delete(`/api/v1/connections/${C.id}/functions/${F.id}?force=true`)).status,
        204,
      );
      assert.ok(
        !(await storedEdges(server, server.orgId)).some((e) => e.startsWith(`function:${F.id}`)),
        'edges gone',
      );
    });

    it('refuses to delete a pipeline another enabled pipeline runs, and a model an enabled pipeline uses', async () => {
      const { M, P, R, Q, D } = await fresh();
      const refused = await api.delete(`/api/v1/engine/pipelines/${P.id}`);
      assert.equal(refused.status, 409, refused.text);
      assert.equal(severities(refused.body)[k('pipeline', R)], 'breaks');
      assert.equal(severities(refused.body)[k('dashboard', D)], 'degrades', 'D shows what P publishes');
      const model = await api.delete(`/api/v1/engine/models/${M.id}`);
      assert.equal(model.status, 409, model.text);
      assert.equal(severities(model.body)[k('pipeline', P)], 'breaks');
      assert.equal(
        (await api.delete(`/api/v1/engine/pipelines/${R.id}`)).status,
        204,
        'nothing depends on R',
      );
      assert.equal((await api.delete(`/api/v1/engine/pipelines/${Q.id}`)).status, 204);
      const still = await api.delete(`/api/v1/engine/pipelines/${P.id}`);
      assert.equal(still.status, 409, 'R is gone, but D still shows what P publishes');
      assert.deepEqual(Object.values(severities(still.body)).sort().at(0), 'degrades');
      assert.equal((await api.delete(`/api/v1/engine/pipelines/${P.id}?force=true`)).status, 204);
      assert.equal((await api.delete(`/api/v1/engine/models/${M.id}`)).status, 204, 'P is gone');
      assert.equal((await api.delete(`/api/v1/engine/models/${M.id}?force=true&bogus=1`)).status, 400);
    });

    it('keeps refusing a model that another model refers to (the models module answers it)', async () => {
      const { M } = await fresh();
      const outer = await api.post('/api/v1/engine/models', {
        name: `Outer ${n}`,
        fields: [{ name: 'inner', type: 'model', model: { id: M.id } }],
      });
      assert.equal(outer.status, 201, outer.text);
      assert.ok(
        (await dependents('model', M.id)).includes(k('model', outer.body.data)),
        'model → model edge',
      );
      const refused = await api.delete(`/api/v1/engine/models/${M.id}?force=true`);
      assert.equal(refused.status, 409);
      assert.equal(refused.body.dependents[0].type, 'model');
    });

    it('rewrites edges on every save: pipeline, function, dashboard, model, binding, folder', async () => {
      const { C, F, M, P, D, Fo } = await fresh();
      const manual = { id: 'start', name: 'Start', type: 'trigger.manual', parameters: {} };
      // A stale version changes nothing, edges included.
      const edgesBefore = await storedEdges(server, server.orgId);
      const stale = await api.put(`/api/v1/engine/pipelines/${P.id}`, {
        name: P.name,
        version: 99,
        nodes: [manual],
        edges: [],
      });
      assert.equal(stale.status, 409);
      assert.deepEqual(await storedEdges(server, server.orgId), edgesBefore);
      // P without its publish node: stopping C no longer reaches the dashboard.
      const saved = await api.put(`/api/v1/engine/pipelines/${P.id}`, {
        name: P.name,
        version: 1,
        nodes: [
          manual,
          {
            id: 'read',
            name: 'Read PLC',
            type: 'connection.call',
            parameters: { connectionId: C.id, functionId: F.id },
          },
        ],
        edges: [{ source: 'start', target: 'read' }],
      });
      assert.equal(saved.status, 200, saved.text);
      await enable(P.id);
      assert.ok(
        !(await dependents('connection', C.id)).includes(k('dashboard', D)),
        'D no longer depends on C',
      );
      const impact = await api.post(`${GRAPH}/impact`, {
        action: 'stop',
        entity: { type: 'connection', id: C.id },
      });
      assert.ok(!impact.text.includes(D.id), 'impact(stop C) no longer lists D');
      assert.ok(!(await dependents('model', M.id)).includes(k('pipeline', P)), 'nor does P use M');

      // The function now publishes what the dashboard shows.
      const fn = await api.patch(`/api/v1/connections/${C.id}/functions/${F.id}`, {
        uns: { topic: 'v1/a/b/fn', intervalMs: 60_000 },
      });
      assert.equal(fn.status, 200, fn.text);
      assert.ok(
        (await dependents('connection', C.id)).includes(k('dashboard', D)),
        'D depends on C through F',
      );

      // The dashboard shows something else.
      const dash = await api.patch(`/api/v1/uns/dashboards/${D.id}`, {
        version: 1,
        panels: [
          {
            id: 'p',
            type: 'stat',
            gridPos: { x: 0, y: 0, w: 6, h: 4 },
            queries: [{ topic: 'v1/elsewhere/x' }],
          },
        ],
      });
      assert.equal(dash.status, 200, dash.text);
      assert.ok(
        !(await dependents('connection', C.id)).includes(k('dashboard', D)),
        'D reads something else',
      );

      // A model bound to a prefix: its topics depend on it.
      const bound = await api.post(`/api/v1/engine/models/${M.id}/bindings`, { topicPrefix: `v1/bound${n}` });
      assert.equal(bound.status, 201, bound.text);
      const binds = (await storedEdges(server, server.orgId)).filter((e) =>
        e.includes(`model:${M.id} binds-topic`),
      );
      assert.deepEqual(
        binds.map((e) => e.split(' ').at(-1)),
        [`topic:v1/bound${n}/v`],
      );
      assert.equal(
        (await api.delete(`/api/v1/engine/models/${M.id}/bindings/${bound.body.data.id}`)).status,
        204,
      );
      assert.ok(
        !(await storedEdges(server, server.orgId)).some((e) => e.includes(`model:${M.id} binds-topic`)),
        'unbound',
      );

      // Deleting the folder with its dashboards takes the dashboards' edges.
      assert.ok(
        (await storedEdges(server, server.orgId)).some((e) => e.startsWith(`dashboard:${D.id}`)),
        'D has edges',
      );
      assert.equal((await api.delete(`/api/v1/uns/dashboards/folders/${Fo.id}?recursive=true`)).status, 204);
      assert.ok(
        !(await storedEdges(server, server.orgId)).some((e) => e.startsWith(`dashboard:${D.id}`)),
        'D edges gone',
      );
    });
  });
}
