import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { checksumOf } from '../../src/modules/bundles/bundle-format.js';
import { testDialects } from '../helpers/dialects.js';
import { buildOrganization } from '../helpers/factories.js';
import type { TestClient } from '../helpers/http-client.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';
import { createPat } from '../uns/uns-helpers.js';
import {
  ensureContractNodeTypes,
  exportBundle,
  IMPORT,
  type Seeded,
  seedConfiguration,
  validate,
} from './bundle-helpers.js';

ensureContractNodeTypes();

/** A copy of the bundle changed by `edit`, with its checksum made to match again. */
function resealed(bundle: any, edit: (b: any) => void) {
  const copy = structuredClone(bundle);
  edit(copy);
  copy.checksum = checksumOf(copy);
  return copy;
}

for (const dialect of testDialects()) {
  describe(`Import: conflicts, bindings, atomicity, bad input [${dialect}]`, () => {
    let server: TestServer;
    let a: TestClient;
    let seeded: Seeded;
    let bundle: any;
    let inputs: Record<string, string>;

    /** Validates and executes; answers the report (asserting 201). */
    const importInto = async (api: TestClient, options: Record<string, unknown>, b = bundle) => {
      const plan = await validate(api, b, options);
      assert.equal(plan.canExecute, true, JSON.stringify(plan.problems));
      const needed = Object.fromEntries(plan.requiredInputs.map((k: string) => [k, inputs[k]]));
      const res = await api.post(`${IMPORT}/execute`, { planId: plan.planId, inputs: needed });
      assert.equal(res.status, 201, res.text);
      return { plan, report: res.body.data };
    };
    const counts = async (api: TestClient) => ({
      connections: (await api.get('/api/v1/connections')).body.data.length,
      models: (await api.get('/api/v1/engine/models')).body.data.length,
      pipelines: (await api.get('/api/v1/engine/pipelines')).body.data.length,
      dashboards: (await api.get('/api/v1/uns/dashboards')).body.data.length,
      folders: (await api.get('/api/v1/uns/dashboards/folders')).body.data.length,
    });

    before(async () => {
      server = await startTestServer(dialect, { config: { batchBodyLimit: 64 * 1024 } });
      a = server.admin;
      seeded = await seedConfiguration(a);
      ({ bundle } = await exportBundle(a, {
        select: [{ type: 'pipeline', id: seeded.runnerId }],
        include: [{ type: 'dashboard', id: seeded.dashboardId }],
      }));
      inputs = Object.fromEntries(bundle.inputs.map((i: any) => [i.key, `secret-${i.path}`]));
    });
    after(() => server?.close());

    it('answers each conflict policy: fail, skip, rename, overwrite (a new version that reverts)', async () => {
      const b = a.inOrg(await buildOrganization(server));
      const first = (await importInto(b, {})).report;
      const before = await counts(b);

      const failing = await validate(b, bundle);
      assert.equal(failing.canExecute, false);
      assert.equal(failing.planId, null);
      assert.equal(failing.problems.filter((p: any) => p.code === 'conflict').length, 8);

      const skipped = (await importInto(b, { conflict: 'skip' })).report;
      assert.equal(skipped.created, 0);
      assert.equal(skipped.skipped, 9);
      assert.deepEqual(await counts(b), before);

      const renamed = (await importInto(b, { conflict: 'rename' })).report;
      assert.equal(renamed.renamed, 6);
      // Below a renamed folder nothing clashes: Lines, the dashboard and the function are new.
      assert.equal(renamed.created, 3);
      const runner = (await b.get(`/api/v1/engine/pipelines/${renamed.idMap['pipeline:Runner']}`)).body.data;
      assert.equal(runner.name, 'Runner (imported)');
      // The renamed copy refers to the renamed copy of Poll, not to the original.
      assert.equal(
        runner.nodes.find((n: any) => n.id === 'run').parameters.pipelineId,
        renamed.idMap['pipeline:Poll line 1'],
      );
      assert.notEqual(renamed.idMap['pipeline:Poll line 1'], first.idMap['pipeline:Poll line 1']);
      const connections = (await b.get('/api/v1/connections')).body.data.map((c: any) => c.name).sort();
      assert.deepEqual(connections, ['PLC line 1', 'PLC line 1 (imported)']);

      // Overwrite: change Poll in the source, import again; the target gets a new version, and a revert.
      const pollId = first.idMap['pipeline:Poll line 1'];
      const changed = resealed(bundle, (x) => {
        x.entities.pipelines.find((p: any) => p.name === 'Poll line 1').description = 'changed upstream';
      });
      const over = await importInto(
        b,
        { conflict: 'overwrite', overrides: { 'pipeline:Runner': 'skip' } },
        changed,
      );
      assert.equal(over.plan.actions.find((x: any) => x.key === 'pipeline:Runner').action, 'skip');
      assert.equal(over.plan.actions.find((x: any) => x.key === 'pipeline:Poll line 1').action, 'update');
      assert.equal(over.report.idMap['pipeline:Poll line 1'], pollId);
      const poll = (await b.get(`/api/v1/engine/pipelines/${pollId}`)).body.data;
      assert.equal(poll.description, 'changed upstream');
      assert.equal(poll.version, 2);
      const history = (await b.get(`/api/v1/engine/pipelines/${pollId}/versions`)).body.data;
      assert.deepEqual(
        history.map((v: any) => v.changeType),
        ['import', 'import'],
      );
      const reverted = await b.post(`/api/v1/engine/pipelines/${pollId}/versions/1/revert`, {});
      assert.equal(reverted.status, 200, reverted.text);
      assert.equal((await b.get(`/api/v1/engine/pipelines/${pollId}`)).body.data.description, null);
      // The overwritten connection kept its secrets (no input given): still configured.
      const connection = (await b.get(`/api/v1/connections/${first.idMap['connection:PLC line 1']}`)).body
        .data;
      assert.deepEqual(connection.config.bearerToken, { configured: true });
    });

    it('an overwrite of a connection and its function is a version of each, and reverting restores them', async () => {
      const b = a.inOrg(await buildOrganization(server));
      const first = (await importInto(b, {})).report;
      const connectionId = first.idMap['connection:PLC line 1'];
      const functionKey = Object.keys(first.idMap).find((k) => k.startsWith('function:'))!;
      const functionId = first.idMap[functionKey];
      const connectionPath = `/api/v1/connections/${connectionId}`;
      const functionPath = `${connectionPath}/functions/${functionId}`;
      const original = (await b.get(connectionPath)).body.data;
      assert.equal(original.version, 1);
      // The connection as a row made before connections were versioned: no history yet.
      await server.storage.db.deleteFrom('entity_versions').where('entity_id', '=', connectionId).execute();

      const changed = resealed(bundle, (x) => {
        const c = x.entities.connections.find((e: any) => e.name === 'PLC line 1');
        c.description = 'changed upstream';
        c.config.baseUrl = 'http://127.0.0.1:9/changed';
        c.functions[0].config = { path: '/changed' };
      });
      await importInto(b, { conflict: 'overwrite' }, changed);
      const overwritten = (await b.get(connectionPath)).body.data;
      assert.equal(overwritten.description, 'changed upstream');
      assert.equal(overwritten.version, 2);
      const history = (await b.get(`${connectionPath}/versions`)).body.data;
      assert.deepEqual(
        history.map((v: any) => [v.version, v.changeType]),
        [
          [2, 'import'],
          [1, 'create'],
        ],
      );
      assert.ok(history[0].summary.changed.includes('/config/baseUrl'), JSON.stringify(history[0].summary));
      const functionHistory = (await b.get(`${functionPath}/versions`)).body.data;
      assert.deepEqual(
        functionHistory.map((v: any) => [v.version, v.changeType]),
        [
          [2, 'import'],
          [1, 'import'],
        ],
      );

      const reverted = await b.post(`${connectionPath}/versions/1/revert`, {});
      assert.equal(reverted.status, 200, reverted.text);
      const restored = (await b.get(connectionPath)).body.data;
      assert.equal(restored.version, 3);
      assert.equal(restored.description, original.description);
      assert.deepEqual(restored.config, original.config);
      assert.deepEqual(restored.config.bearerToken, { configured: true });
      const fnReverted = await b.post(`${functionPath}/versions/1/revert`, {});
      assert.equal(fnReverted.status, 200, fnReverted.text);
      assert.deepEqual((await b.get(functionPath)).body.data.config, { path: '/temp' });
      const bodies = [
        (await b.get(`${connectionPath}/versions/1`)).text,
        (await b.get(`${connectionPath}/versions/2`)).text,
        (await b.get(`${connectionPath}/versions/2/diff`)).text,
      ].join('\n');
      for (const value of Object.values(inputs)) assert.ok(!bodies.includes(value), 'no secret in versions');
    });

    it('carries the organization settings when chosen, with the default dashboard remapped', async () => {
      const EDGE_NODE = {
        groupId: 'Meridian',
        edgeNodeId: 'UNS',
        devices: [{ deviceId: 'Line1', prefix: 'v1/plant/line1' }],
      };
      const settings = (await a.get('/api/v1/organizations/settings')).body.data;
      const patched = await a.patch('/api/v1/organizations/settings', {
        version: settings.version,
        timezone: 'Europe/Berlin',
        dashboards: { defaultDashboardId: seeded.dashboardId },
        sparkplug: { edgeNode: EDGE_NODE },
      });
      assert.equal(patched.status, 200, patched.text);
      const { bundle: withSettings } = await exportBundle(a, {
        select: [{ type: 'settings' }, { type: 'dashboard', id: seeded.dashboardId }],
      });
      assert.deepEqual(withSettings.entities.settings.document.dashboards.defaultDashboardId, {
        $ref: 'dashboard:Plant/Lines/Line overview',
      });
      const g = a.inOrg(await buildOrganization(server));
      const skipped = await importInto(g, { overrides: { 'settings:organization': 'skip' } }, withSettings);
      assert.equal(skipped.plan.actions.find((x: any) => x.type === 'settings').action, 'skip');
      assert.equal((await g.get('/api/v1/organizations/settings')).body.data.timezone, 'UTC');
      const h = a.inOrg(await buildOrganization(server));
      const { report } = await importInto(h, {}, withSettings);
      const imported = (await h.get('/api/v1/organizations/settings')).body.data;
      assert.equal(imported.timezone, 'Europe/Berlin');
      assert.deepEqual(imported.sparkplug.edgeNode, EDGE_NODE, 'the Sparkplug edge node setting travels');
      assert.equal(
        imported.dashboards.defaultDashboardId,
        report.idMap['dashboard:Plant/Lines/Line overview'],
      );
    });

    it('matches by id: importing into the source organization updates the same entities', async () => {
      const { plan, report } = await importInto(a, { match: 'id', conflict: 'overwrite' });
      assert.ok(
        plan.actions.every((x: any) => x.action === 'update'),
        JSON.stringify(plan.actions),
      );
      assert.equal(report.idMap['pipeline:Runner'], seeded.runnerId);
      assert.equal(report.idMap['connection:PLC line 1'], seeded.connectionId);
    });

    it('binds a bundle connection to an existing one: no connection created, no secret asked', async () => {
      const c = a.inOrg(await buildOrganization(server));
      const existing = await c.post('/api/v1/connections', {
        name: 'Gateway C',
        protocol: 'rest',
        config: { baseUrl: 'http://127.0.0.1:9/c' },
      });
      const existingFn = await c.post(`/api/v1/connections/${existing.body.data.id}/functions`, {
        name: 'read temperature',
        type: 'rest.get',
        config: { path: '/c-temp' },
      });
      const plan = await validate(c, bundle, {
        bindings: { 'connection:PLC line 1': existing.body.data.id },
      });
      assert.deepEqual(plan.missingInputs, []);
      assert.deepEqual(plan.requiredInputs, []);
      const { report } = await importInto(c, {
        bindings: { 'connection:PLC line 1': existing.body.data.id },
      });
      assert.equal(report.bound, 2);
      assert.equal((await c.get('/api/v1/connections')).body.data.length, 1);
      const poll = (await c.get(`/api/v1/engine/pipelines/${report.idMap['pipeline:Poll line 1']}`)).body
        .data;
      assert.deepEqual(poll.nodes.find((n: any) => n.id === 'call').parameters, {
        connectionId: existing.body.data.id,
        functionId: existingFn.body.data.id,
      });
      const unknown = await validate(c, bundle, {
        bindings: { 'connection:PLC line 1': '00000000-0000-4000-8000-000000000000' },
        conflict: 'skip',
      });
      assert.deepEqual(
        unknown.problems.map((p: any) => p.code),
        ['invalid_binding'],
      );
    });

    it('leaves nothing behind when the import fails half way (a name twice, an invalid dashboard)', async () => {
      const d = a.inOrg(await buildOrganization(server));
      const twice = resealed(bundle, (x) => {
        const copy = structuredClone(x.entities.pipelines[0]);
        x.entities.pipelines.push({ ...copy, key: 'pipeline:other', name: copy.name.toUpperCase() });
      });
      const plan = await validate(d, twice);
      assert.equal(plan.canExecute, true);
      const failed = await d.post(`${IMPORT}/execute`, { planId: plan.planId, inputs });
      assert.equal(failed.status, 409, failed.text);
      assert.deepEqual(await counts(d), {
        connections: 0,
        models: 0,
        pipelines: 0,
        dashboards: 0,
        folders: 0,
      });
      const badBoard = resealed(bundle, (x) => {
        x.entities.dashboards[0].definition.panels[0].type = 'no-such-panel';
      });
      const plan2 = await validate(d, badBoard);
      const failed2 = await d.post(`${IMPORT}/execute`, { planId: plan2.planId, inputs });
      assert.equal(failed2.status, 400, failed2.text);
      assert.match(failed2.body.message, /^dashboard:Plant\/Lines\/Line overview: /);
      assert.deepEqual(await counts(d), {
        connections: 0,
        models: 0,
        pipelines: 0,
        dashboards: 0,
        folders: 0,
      });
      const versions = await server.storage.db.selectFrom('entity_versions').select('entity_id').execute();
      const ids = Object.values((await validate(d, bundle)).actions).map((x: any) => x.targetId);
      assert.ok(!versions.some((v) => ids.includes(v.entity_id)));
      // The plan that failed can run once it can succeed: nothing was claimed.
      assert.equal((await d.post(`${IMPORT}/execute`, { planId: plan.planId, inputs })).status, 409);
    });

    it('reports unknown protocols and node types, unresolved references and newer formats as problems', async () => {
      const e = a.inOrg(await buildOrganization(server));
      const odd = resealed(bundle, (x) => {
        x.entities.connections[0].protocol = 'bacnet';
        x.entities.pipelines[0].nodes[0].type = 'vendor.magic';
        x.entities.models = x.entities.models.filter((m: any) => m.name !== 'Motor');
      });
      const plan = await validate(e, odd);
      assert.equal(plan.canExecute, false);
      const codes = plan.problems.map((p: any) => p.code).sort();
      assert.deepEqual(codes, ['unknown_node_type', 'unresolved_reference', 'unsupported_protocol']);
      const newer = await validate(e, { ...bundle, formatVersion: 2 });
      assert.deepEqual(
        newer.problems.map((p: any) => p.code),
        ['unsupported_format_version'],
      );
      assert.match(newer.problems[0].message, /bundle format 2 is newer than this server reads \(1\)/);
    });

    it('refuses malformed bundles, oversized bodies, unknown plans and inputs', async () => {
      const e = a.inOrg(await buildOrganization(server));
      for (const bad of ['x', [], { format: 'other' }, { ...bundle, entities: { pipelines: 'no' } }]) {
        const res = await e.post(`${IMPORT}/validate`, { bundle: bad });
        assert.equal(res.status, 400, res.text);
        assert.equal(res.body.error, 'bad_request');
      }
      const json = await e.request('POST', `${IMPORT}/validate`, {
        raw: '{"bundle": ',
        headers: { 'content-type': 'application/json' },
      });
      assert.equal(json.status, 400);
      const big = await e.post(`${IMPORT}/validate`, {
        bundle: { ...bundle, description: 'x'.repeat(70 * 1024) },
      });
      assert.equal(big.status, 413, big.text);
      assert.equal(big.body.error, 'payload_too_large');
      const missing = await e.post(`${IMPORT}/execute`, { planId: '00000000-0000-4000-8000-000000000000' });
      assert.equal(missing.status, 404);
      const plan = await validate(e, bundle);
      const stray = await e.post(`${IMPORT}/execute`, {
        planId: plan.planId,
        inputs: { ...inputs, 'secret:x': 'y' },
      });
      assert.equal(stray.status, 400);
      assert.match(stray.body.message, /"secret:x" is not an input of this bundle/);
    });

    it('needs the read scope of every exported type and the write scope of every imported type', async () => {
      const readPipelines = a.as({ token: await createPat(a, ['pipelines:read']), org: server.orgId });
      const denied = await readPipelines.post('/api/v1/dependencies/export', {
        select: [{ type: 'pipeline', id: seeded.pollId }],
      });
      assert.equal(denied.status, 403, denied.text);
      assert.equal(denied.body.error, 'insufficient_scope');
      assert.match(denied.body.message, /connectors:read/);
      const f = await buildOrganization(server);
      const writer = a.as({
        token: await createPat(a, ['pipelines:write', 'models:write', 'dashboards:write']),
        org: f,
      });
      const refused = await writer.post(`${IMPORT}/validate`, { bundle });
      assert.equal(refused.status, 403, refused.text);
      assert.match(refused.body.message, /connectors:write/);
    });
  });
}
