import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { testDialects } from '../helpers/dialects.js';
import { buildOrganization } from '../helpers/factories.js';
import type { TestClient } from '../helpers/http-client.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';
import { createPat } from '../uns/uns-helpers.js';
import { buildConfiguration, type Configuration, GRAPH, keysOf, storedEdges } from './graph-fixture.js';

const k = (type: string, e: { id: string }) => `${type}:${e.id}`;

for (const dialect of testDialects()) {
  describe(`Dependency graph [${dialect}]`, () => {
    let server: TestServer;
    let api: TestClient;
    let cfg: Configuration;

    before(async () => {
      server = await startTestServer(dialect);
      api = server.admin;
      cfg = await buildConfiguration(server, api);
    });
    after(() => server?.close());

    it('lists direct and transitive dependents of a connection', async () => {
      const { C, F, F2, P, Q, R, D } = cfg;
      const direct = await api.get(`${GRAPH}/connection/${C.id}/dependents`);
      assert.equal(direct.status, 200, direct.text);
      assert.deepEqual(
        keysOf(direct.body.data),
        [k('function', F), k('function', F2), k('pipeline', P), k('pipeline', Q)].sort(),
      );
      assert.ok(
        direct.body.data.every((d: { depth: number }) => d.depth === 1),
        'every direct dependent is at depth 1',
      );

      const all = await api.get(`${GRAPH}/connection/${C.id}/dependents?transitive=true`);
      assert.deepEqual(
        keysOf(all.body.data),
        [
          k('function', F),
          k('function', F2),
          k('pipeline', P),
          k('pipeline', Q),
          k('pipeline', R),
          k('dashboard', D),
        ].sort(),
      );
      const dash = all.body.data.find((d: { entity: { key: string } }) => d.entity.key === k('dashboard', D));
      assert.equal(dash.entity.name, 'Line overview');
      // The dashboard depends through the filter it shows, the topic P publishes, and P itself.
      assert.deepEqual(dash.path, [
        k('dashboard', D),
        'topic:v1/a/b/+',
        'topic:v1/a/b/temp',
        k('pipeline', P),
        k('connection', C),
      ]);
      const onlyDashboards = await api.get(
        `${GRAPH}/connection/${C.id}/dependents?transitive=true&types=dashboard`,
      );
      assert.deepEqual(keysOf(onlyDashboards.body.data), [k('dashboard', D)]);
    });

    it('lists what a dashboard and a pipeline depend on', async () => {
      const { C, F, M, P, D, Fo } = cfg;
      const dash = await api.get(`${GRAPH}/dashboard/${D.id}/dependencies?transitive=true`);
      assert.equal(dash.status, 200, dash.text);
      assert.deepEqual(
        keysOf(dash.body.data),
        [k('folder', Fo), k('pipeline', P), k('connection', C), k('function', F), k('model', M)].sort(),
      );
      assert.deepEqual(
        keysOf(dash.body.data, true).filter((x) => x.startsWith('topic:')),
        ['topic:v1/a/b/+', 'topic:v1/a/b/temp'],
      );
      // A topic in the path is URL-encoded.
      const filter = await api.get(
        `${GRAPH}/topic/${encodeURIComponent('v1/a/b/+')}/dependencies?transitive=true`,
      );
      assert.equal(filter.status, 200, filter.text);
      assert.deepEqual(
        keysOf(filter.body.data),
        [k('connection', C), k('function', F), k('model', M), k('pipeline', P)].sort(),
      );
      const pipe = await api.get(`${GRAPH}/pipeline/${P.id}/dependencies`);
      const byKey = new Map(pipe.body.data.map((d: { entity: { key: string } }) => [d.entity.key, d]));
      assert.equal((byKey.get(k('connection', C)) as { relation: string }).relation, 'uses-connection');
      assert.equal((byKey.get(k('function', F)) as { via: string }).via, 'Read PLC');
      assert.equal((byKey.get(k('model', M)) as { relation: string }).relation, 'uses-model');
    });

    it('assesses the impact of stopping a connection: breaks, degrades and info with their paths', async () => {
      const { C, F, F2, P, Q, R, D } = cfg;
      const res = await api.post(`${GRAPH}/impact`, {
        action: 'stop',
        entity: { type: 'connection', id: C.id },
      });
      assert.equal(res.status, 200, res.text);
      const severity = Object.fromEntries(
        res.body.data.affected.map((a: { entity: { key: string }; severity: string }) => [
          a.entity.key,
          a.severity,
        ]),
      );
      assert.deepEqual(severity, {
        [k('pipeline', P)]: 'breaks',
        [k('pipeline', R)]: 'degrades',
        [k('dashboard', D)]: 'degrades',
        [k('pipeline', Q)]: 'info',
        [k('function', F)]: 'info',
        [k('function', F2)]: 'info',
      });
      assert.deepEqual(res.body.data.summary, { breaks: 1, degrades: 2, info: 3 });
      const f2 = res.body.data.affected.find(
        (a: { entity: { key: string } }) => a.entity.key === k('function', F2),
      );
      assert.match(f2.reason, /it stops with the connection/);
      assert.equal(res.body.data.blocking, true);
      const dash = res.body.data.affected.find(
        (a: { entity: { key: string } }) => a.entity.key === k('dashboard', D),
      );
      assert.deepEqual(
        dash.path.map((s: { key: string; relation?: string }) => [s.key, s.relation]),
        [
          [k('dashboard', D), 'reads-topic'],
          ['topic:v1/a/b/+', 'matches'],
          ['topic:v1/a/b/temp', 'publishes'],
          [k('pipeline', P), 'uses-connection'],
          [k('connection', C), undefined],
        ],
      );
      assert.match(dash.reason, /dashboard 'Line overview' reads filter v1\/a\/b\/\+/);
      const q = res.body.data.affected.find(
        (a: { entity: { key: string } }) => a.entity.key === k('pipeline', Q),
      );
      assert.match(q.reason, /pipeline 'Draft' is disabled/);
    });

    it('assesses delete, disable and update; an action that does not apply is 400', async () => {
      const { M, P, R, D } = cfg;
      const model = await api.post(`${GRAPH}/impact`, {
        action: 'delete',
        entity: { type: 'model', id: M.id },
      });
      const sev = (res: typeof model) =>
        Object.fromEntries(
          res.body.data.affected.map((a: { entity: { key: string }; severity: string }) => [
            a.entity.key,
            a.severity,
          ]),
        );
      assert.deepEqual(sev(model), {
        [k('pipeline', P)]: 'breaks',
        [k('pipeline', R)]: 'degrades',
        [k('dashboard', D)]: 'degrades',
      });
      const disable = await api.post(`${GRAPH}/impact`, {
        action: 'disable',
        entity: { type: 'pipeline', id: P.id },
      });
      assert.deepEqual(sev(disable), { [k('pipeline', R)]: 'breaks', [k('dashboard', D)]: 'degrades' });
      const update = await api.post(`${GRAPH}/impact`, {
        action: 'update',
        entity: { type: 'pipeline', id: P.id },
      });
      assert.ok(
        update.body.data.affected.every((a: { severity: string }) => a.severity === 'info'),
        'an update is only info',
      );
      assert.equal(update.body.data.blocking, false);
      const stopPipeline = await api.post(`${GRAPH}/impact`, {
        action: 'stop',
        entity: { type: 'pipeline', id: P.id },
      });
      assert.equal(stopPipeline.status, 400);
      assert.match(stopPipeline.body.message, /stop does not apply to a pipeline/);
      const dashboard = await api.post(`${GRAPH}/impact`, {
        action: 'delete',
        entity: { type: 'dashboard', id: D.id },
      });
      assert.deepEqual(dashboard.body.data.affected, []);
    });

    it('shows the neighbourhood of a pipeline at depth 1 and 2, in one direction or both', async () => {
      const { C, F, M, P, R } = cfg;
      const one = await api.get(`${GRAPH}?focus=pipeline:${P.id}&depth=1`);
      assert.equal(one.status, 200, one.text);
      const keys = one.body.data.nodes.map((n: { key: string }) => n.key).sort();
      assert.deepEqual(
        keys,
        [
          k('connection', C),
          k('function', F),
          k('model', M),
          k('pipeline', P),
          k('pipeline', R),
          'topic:v1/a/b/temp',
        ].sort(),
      );
      assert.equal(one.body.data.focus, k('pipeline', P));
      const pub = one.body.data.edges.find((e: { relation: string }) => e.relation === 'publishes');
      assert.deepEqual(pub, {
        from: k('pipeline', P),
        to: 'topic:v1/a/b/temp',
        relation: 'publishes',
        via: 'Publish',
        dependent: 'topic:v1/a/b/temp',
      });
      const p = one.body.data.nodes.find((n: { key: string }) => n.key === k('pipeline', P));
      assert.equal(p.status, 'enabled');
      assert.equal(p.depth, 0);

      const down = await api.get(`${GRAPH}?focus=pipeline:${P.id}&depth=3&direction=dependents`);
      const downKeys = down.body.data.nodes.map((n: { key: string }) => n.key);
      assert.ok(downKeys.includes('topic:v1/a/b/+'), "downKeys.includes('topic:v1/a/b/+')");
      assert.ok(!downKeys.includes(k('connection', C)), "!downKeys.includes(k('connection', C))");

      const topic = await api.get(`${GRAPH}?focus=${encodeURIComponent('topic:v1/a/b/temp')}&depth=1`);
      assert.equal(topic.status, 200, topic.text);
      assert.ok(
        topic.body.data.nodes.some((n: { key: string }) => n.key === k('pipeline', P)),
        'the topic focus reaches its publisher',
      );
    });

    it('shows a dynamic reference as unresolved, and a reference to nothing as missing', async () => {
      const ghost = '0e0e0e0e-0000-4000-8000-000000000000';
      const res = await api.post('/api/v1/engine/pipelines', {
        name: 'Dynamic',
        nodes: [
          { id: 'start', name: 'Start', type: 'trigger.manual', parameters: {} },
          {
            id: 'pub',
            name: 'Publish line',
            type: 'uns.publish',
            parameters: { topic: '{{ "v1/line/" & $.line }}' },
          },
          { id: 'run', name: 'Run ghost', type: 'pipeline.run', parameters: { pipelineId: ghost } },
        ],
        edges: [],
      });
      assert.equal(res.status, 201, res.text);
      const g = await api.get(`${GRAPH}?focus=pipeline:${res.body.data.id}&depth=1`);
      const self = g.body.data.nodes.find((n: { depth: number }) => n.depth === 0);
      assert.deepEqual(self.unresolved, [
        {
          relation: 'publishes',
          targetType: 'topic',
          via: 'Publish line',
          expression: '{{ "v1/line/" & $.line }}',
        },
      ]);
      const missing = g.body.data.nodes.find((n: { key: string }) => n.key === `pipeline:${ghost}`);
      assert.equal(missing.missing, true);
      assert.equal(missing.name, null);
      assert.equal((await api.delete(`/api/v1/engine/pipelines/${res.body.data.id}`)).status, 204);
    });

    it('lists unused entities', async () => {
      const { C2, F2, F, Q } = cfg;
      const res = await api.get(`${GRAPH}/orphans`);
      assert.equal(res.status, 200, res.text);
      const keys = res.body.data.map((o: { entity: { key: string } }) => o.entity.key);
      assert.ok(keys.includes(k('function', F2)), "keys.includes(k('function', F2))");
      assert.ok(keys.includes(k('connection', C2)), "keys.includes(k('connection', C2))");
      assert.ok(keys.includes(k('pipeline', Q)), 'a disabled pipeline nothing runs');
      assert.ok(!keys.includes(k('function', F)), "!keys.includes(k('function', F))");
      const fns = await api.get(`${GRAPH}/orphans?types=function`);
      assert.deepEqual(
        fns.body.data.map((o: { entity: { key: string } }) => o.entity.key),
        [k('function', F2)],
      );
      assert.match(fns.body.data[0].reason, /no pipeline calls it/);
    });

    it('answers bad input with 400 and unknown entities with 404', async () => {
      const { P } = cfg;
      for (const query of [
        '',
        '?focus=pipeline',
        `?focus=robot:${P.id}`,
        '?focus=pipeline:not-a-uuid',
        `?focus=pipeline:${P.id}&depth=0`,
        `?focus=pipeline:${P.id}&depth=6`,
        `?focus=pipeline:${P.id}&direction=sideways`,
        `?focus=pipeline:${P.id}&extra=1`,
      ]) {
        const res = await api.get(`${GRAPH}${query}`);
        assert.equal(res.status, 400, `${query}: ${res.text}`);
        assert.equal(res.body.error, 'bad_request');
      }
      assert.equal((await api.get(`${GRAPH}/robot/${P.id}/dependents`)).status, 400);
      assert.equal((await api.get(`${GRAPH}/pipeline/${P.id}/dependents?types=robot`)).status, 400);
      assert.equal(
        (await api.post(`${GRAPH}/impact`, { action: 'explode', entity: { type: 'pipeline', id: P.id } }))
          .status,
        400,
      );
      assert.equal((await api.post(`${GRAPH}/impact`, { action: 'delete' })).status, 400);
      const unknown = '11111111-2222-4333-8444-555555555555';
      const nf = await api.get(`${GRAPH}?focus=pipeline:${unknown}`);
      assert.equal(nf.status, 404);
      assert.equal(nf.body.error, 'not_found');
      assert.equal(
        (await api.post(`${GRAPH}/impact`, { action: 'delete', entity: { type: 'connection', id: unknown } }))
          .status,
        404,
      );
    });

    it('shows entities of types the caller cannot read redacted, and refuses a focus it cannot read (403)', async () => {
      const { C, P } = cfg;
      const pipelinesOnly = server.client.as({
        token: await createPat(api, ['pipelines:read']),
        org: server.orgId,
      });
      const g = await pipelinesOnly.get(`${GRAPH}?focus=pipeline:${P.id}&depth=1`);
      assert.equal(g.status, 200, g.text);
      const conn = g.body.data.nodes.find((n: { key: string }) => n.key === k('connection', C));
      assert.deepEqual(conn, {
        key: k('connection', C),
        type: 'connection',
        id: C.id,
        name: null,
        redacted: true,
        depth: 1,
      });
      assert.ok(!g.text.includes('v1/a/b/temp'), 'a topic is redacted with its path');
      assert.ok(!g.text.includes('"name":"PLC"'), "the connection's name is not shown");
      const refused = await pipelinesOnly.get(`${GRAPH}?focus=connection:${C.id}`);
      assert.equal(refused.status, 403);
      assert.equal(refused.body.error, 'insufficient_scope');
      assert.match(refused.body.message, /connectors:read/);
      assert.equal((await pipelinesOnly.get(`${GRAPH}/orphans?types=connection`)).status, 403);
      const orphans = await pipelinesOnly.get(`${GRAPH}/orphans`);
      assert.ok(
        orphans.body.data.every((o: { entity: { type: string } }) => o.entity.type === 'pipeline'),
        'only readable types are listed',
      );
    });

    it("never shows another organization's entities", async () => {
      const { C, P } = cfg;
      const other = await buildOrganization(server, 'Other plant');
      const elsewhere = api.inOrg(other);
      const theirs = await buildConfiguration(server, elsewhere, ' (other)');
      // A pipeline there naming this organization's connection: the reference leads nowhere there.
      const spy = await elsewhere.post('/api/v1/engine/pipelines', {
        name: 'Spy',
        nodes: [
          {
            id: 'c',
            name: 'Call',
            type: 'connection.call',
            parameters: { connectionId: C.id, functionId: cfg.F.id },
          },
        ],
        edges: [],
      });
      assert.equal(spy.status, 201, spy.text);
      const mine = await api.get(`${GRAPH}/connection/${C.id}/dependents?transitive=true`);
      const text = mine.text;
      for (const e of [theirs.P, theirs.D, theirs.R, spy.body.data]) assert.ok(!text.includes(e.id), e.id);
      const topic = await api.get(`${GRAPH}?focus=${encodeURIComponent('topic:v1/a/b/+')}&depth=3`);
      for (const e of [theirs.P, theirs.D, theirs.C]) assert.ok(!topic.text.includes(e.id), e.id);
      assert.equal((await elsewhere.get(`${GRAPH}?focus=pipeline:${P.id}`)).status, 404);
      const there = await elsewhere.get(`${GRAPH}?focus=pipeline:${spy.body.data.id}&depth=1`);
      const conn = there.body.data.nodes.find((n: { key: string }) => n.key === k('connection', C));
      assert.equal(conn.missing, true);
      assert.equal(conn.name, null);
    });

    it('rebuilds the same edges from the stored entities (the backfill at first start)', async () => {
      const before = await storedEdges(server, server.orgId);
      assert.ok(before.length > 10, 'before.length > 10');
      const db = server.storage.db;
      await db.deleteFrom('dependency_edges').execute();
      assert.equal(
        await server.app.dependencyGraph.edges.rebuildIfStale(db, Date.now()),
        false,
        'the extraction is current: nothing to do',
      );
      await db.updateTable('dependency_graph_state').set({ extraction_version: 0 }).execute();
      assert.equal(await server.app.dependencyGraph.edges.rebuildIfStale(db, Date.now()), true);
      assert.deepEqual(await storedEdges(server, server.orgId), before);
      assert.equal(await server.app.dependencyGraph.edges.rebuildIfStale(db, Date.now()), false);
    });
  });
}
