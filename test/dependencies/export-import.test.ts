import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { PACKAGE_VERSION } from '../../src/platform/package-version.js';
import { testDialects } from '../helpers/dialects.js';
import { buildOrganization } from '../helpers/factories.js';
import type { TestClient } from '../helpers/http-client.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';
import {
  comparable,
  EXPORT,
  ensureContractNodeTypes,
  exportBundle,
  IMPORT,
  SECRETS,
  type Seeded,
  seedConfiguration,
  validate,
} from './bundle-helpers.js';

ensureContractNodeTypes();

for (const dialect of testDialects()) {
  describe(`Export and import of configuration [${dialect}]`, () => {
    let server: TestServer;
    let a: TestClient;
    let seeded: Seeded;
    let bundle: any;
    let text: string;
    const selection = { select: [{ type: 'pipeline', id: '' }], include: [{ type: 'dashboard', id: '' }] };

    before(async () => {
      server = await startTestServer(dialect);
      a = server.admin;
      seeded = await seedConfiguration(a);
      selection.select[0]!.id = seeded.runnerId;
      selection.include[0]!.id = seeded.dashboardId;
      ({ bundle, text } = await exportBundle(a, { ...selection, description: 'line 1' }));
    });
    after(() => server?.close());

    it('analyzes a selection: what it requires (transitively) and what may come along', async () => {
      const res = await a.post(`${EXPORT}/analyze`, { select: [{ type: 'pipeline', id: seeded.runnerId }] });
      assert.equal(res.status, 200, res.text);
      const { required, optional, selected, totals } = res.body.data;
      assert.deepEqual(
        selected.map((e: any) => e.key),
        ['pipeline:Runner'],
      );
      assert.deepEqual(required.map((e: any) => e.key).sort(), [
        'connection:PLC line 1',
        'model:Line',
        'model:Motor',
        'pipeline:Poll line 1',
      ]);
      assert.ok(optional.some((e: any) => e.key === 'settings:organization'));
      assert.deepEqual(totals, { pipeline: 2, connection: 1, model: 2, function: 1 });
      const folder = await a.post(`${EXPORT}/analyze`, {
        select: [{ type: 'dashboard', id: seeded.dashboardId }],
      });
      assert.deepEqual(folder.body.data.required.map((e: any) => e.key).sort(), [
        'folder:Plant',
        'folder:Plant/Lines',
      ]);
      const missing = await a.post(`${EXPORT}/analyze`, {
        select: [{ type: 'model', id: '00000000-0000-4000-8000-000000000000' }],
      });
      assert.equal(missing.status, 404, missing.text);
    });

    it('generates a versioned bundle with keys for references, inputs for secrets and a checksum', async () => {
      assert.equal(bundle.format, 'meridian.bundle');
      assert.equal(bundle.formatVersion, 1);
      assert.equal(bundle.meridian, PACKAGE_VERSION);
      assert.deepEqual(bundle.requires, {
        protocols: ['rest'],
        nodeTypes: ['connection.call', 'model.validate', 'pipeline.run', 'trigger.manual', 'uns.publish'],
      });
      assert.match(bundle.checksum, /^sha256:[0-9a-f]{64}$/);
      assert.deepEqual(bundle.inputs.map((i: any) => i.key).sort(), [
        'secret:connection:PLC line 1:config.bearerToken',
        'secret:connection:PLC line 1:config.password',
      ]);
      const poll = bundle.entities.pipelines.find((p: any) => p.name === 'Poll line 1');
      const call = poll.nodes.find((n: any) => n.id === 'call');
      assert.deepEqual(call.parameters, {
        connectionId: { $ref: 'connection:PLC line 1' },
        functionId: { $ref: 'function:PLC line 1/read temperature' },
      });
      const runner = bundle.entities.pipelines.find((p: any) => p.name === 'Runner');
      assert.equal(runner.nodes.find((n: any) => n.id === 'dyn').parameters.pipelineId, '{{ $.target }}');
      const line = bundle.entities.models.find((m: any) => m.name === 'Line');
      assert.deepEqual(line.fields[0].model, { $ref: 'model:Motor' });
      assert.deepEqual(bundle.entities.dashboards[0].folder, { $ref: 'folder:Plant/Lines' });
      // References are keys: no entity definition holds a source id (only each entity's own sourceId).
      const definitions = JSON.stringify(bundle.entities, (k, v) => (k === 'sourceId' ? undefined : v));
      for (const id of Object.values(seeded))
        assert.ok(!definitions.includes(id), `source id ${id} in the bundle`);
      assert.ok(!text.includes(server.orgId));
    });

    it('never puts a secret value in the bundle bytes', async () => {
      const bytes = Buffer.from(text);
      for (const secret of Object.values(SECRETS)) {
        assert.equal(bytes.indexOf(Buffer.from(secret)), -1, 'a secret in the bundle');
        assert.equal(bytes.indexOf(Buffer.from(Buffer.from(secret).toString('base64'))), -1);
      }
      const stored = await server.storage.db.selectFrom('dependency_exports').select('bundle').execute();
      for (const row of stored)
        for (const secret of Object.values(SECRETS)) assert.ok(!row.bundle.includes(secret));
    });

    it('lists recent exports and downloads one as a file', async () => {
      const list = await a.get(EXPORT);
      assert.equal(list.status, 200, list.text);
      const row = list.body.data.find((e: any) => e.checksum === bundle.checksum);
      assert.equal(row.description, 'line 1');
      assert.equal(row.entityCount, 9);
      assert.equal(row.size, Buffer.byteLength(text));
      const res = await a.get(`${EXPORT}/${row.id}/download`);
      assert.match(
        res.headers.get('content-disposition') ?? '',
        /^attachment; filename="meridian-.*\.meridian\.json"$/,
      );
      assert.match(res.headers.get('content-type') ?? '', /^application\/vnd\.meridian\.bundle\+json/);
      const other = await buildOrganization(server);
      assert.equal((await a.inOrg(other).get(`${EXPORT}/${row.id}/download`)).status, 404);
    });

    it('validates the checksum, and one changed byte fails validation', async () => {
      const b = a.inOrg(await buildOrganization(server));
      assert.deepEqual((await validate(b, bundle)).problems, []);
      const changed = JSON.parse(text.replace('Line 1 gateway', 'Line 1 gatewaz'));
      const plan = await validate(b, changed);
      assert.deepEqual(
        plan.problems.map((p: any) => p.code),
        ['checksum_mismatch'],
      );
      assert.equal(plan.canExecute, false);
      assert.equal(plan.planId, null);
    });

    it('imports into an empty organization: inputs required, pipelines disabled, connections stopped, ids remapped', async () => {
      const b = a.inOrg(await buildOrganization(server));
      const plan = await validate(b, bundle);
      assert.equal(plan.canExecute, true);
      assert.ok(
        plan.actions.every((x: any) => x.action === 'create'),
        JSON.stringify(plan.actions),
      );
      assert.equal(plan.actions.length, 9);
      assert.deepEqual(plan.missingInputs.sort(), bundle.inputs.map((i: any) => i.key).sort());
      const without = await b.post(`${IMPORT}/execute`, { planId: plan.planId });
      assert.equal(without.status, 400, without.text);
      assert.match(
        without.body.message,
        /missing secret:connection:PLC line 1:config\.(password|bearerToken)/,
      );
      assert.equal((await b.get('/api/v1/connections')).body.data.length, 0);
      const inputs = Object.fromEntries(bundle.inputs.map((i: any) => [i.key, `new-${i.path}`]));
      const done = await b.post(`${IMPORT}/execute`, { planId: plan.planId, inputs });
      assert.equal(done.status, 201, done.text);
      assert.equal(done.body.data.created, 9);
      const ids = done.body.data.idMap;
      const connection = (await b.get(`/api/v1/connections/${ids['connection:PLC line 1']}`)).body.data;
      assert.equal(connection.desiredState, 'stopped');
      assert.deepEqual(connection.config.password, { configured: true });
      const poll = (await b.get(`/api/v1/engine/pipelines/${ids['pipeline:Poll line 1']}`)).body.data;
      assert.equal(poll.enabled, false);
      const call = poll.nodes.find((n: any) => n.id === 'call');
      assert.deepEqual(call.parameters, {
        connectionId: ids['connection:PLC line 1'],
        functionId: ids['function:PLC line 1/read temperature'],
      });
      assert.equal(poll.nodes.find((n: any) => n.id === 'check').parameters.modelId, ids['model:Line']);
      const line = (await b.get(`/api/v1/engine/models/${ids['model:Line']}`)).body.data;
      assert.equal(line.fields[0].model.id, ids['model:Motor']);
      const versions = await b.get(`/api/v1/engine/pipelines/${poll.id}/versions`);
      assert.equal(versions.body.data[0].changeType, 'import');
      const board = (await b.get(`/api/v1/uns/dashboards/${ids['dashboard:Plant/Lines/Line overview']}`)).body
        .data;
      assert.equal(board.folderId, ids['folder:Plant/Lines']);

      // The import wrote the dependency graph's edges in its transaction.
      const dependents = await b.get(
        `/api/v1/dependencies/graph/connection/${ids['connection:PLC line 1']}/dependents`,
      );
      assert.equal(dependents.status, 200, dependents.text);
      const found = dependents.body.data.map((d: { entity: { key: string } }) => d.entity.key).sort();
      assert.deepEqual(
        found,
        [`function:${ids['function:PLC line 1/read temperature']}`, `pipeline:${poll.id}`].sort(),
      );

      // The same plan again answers the first result and imports nothing more.
      const again = await b.post(`${IMPORT}/execute`, { planId: plan.planId, inputs });
      assert.equal(again.status, 200, again.text);
      assert.deepEqual(again.body.data, done.body.data);
      assert.equal((await b.get('/api/v1/engine/pipelines')).body.data.length, 2);
      const report = await b.get(`${IMPORT}/${plan.planId}`);
      assert.equal(report.body.data.status, 'completed');
      assert.ok(!JSON.stringify(report.body.data).includes('new-config.password'));

      // Export from the new organization: equal apart from ids, times and checksum.
      const again2 = await exportBundle(b, {
        select: [{ type: 'pipeline', id: ids['pipeline:Runner'] }],
        include: [{ type: 'dashboard', id: ids['dashboard:Plant/Lines/Line overview'] }],
        description: 'line 1',
      });
      assert.deepEqual(comparable(again2.bundle), comparable(bundle));
    });
  });
}
