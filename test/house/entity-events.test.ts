import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import { type EntityChange, EntityEvents } from '../../src/platform/entity-events.js';
import { createLocalInvalidationBus } from '../../src/platform/invalidation-bus.js';
import {
  ensureContractNodeTypes,
  exportBundle,
  IMPORT,
  type Seeded,
  seedConfiguration,
  validate,
} from '../dependencies/bundle-helpers.js';
import { testDialects } from '../helpers/dialects.js';
import { buildOrganization } from '../helpers/factories.js';
import type { TestClient } from '../helpers/http-client.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';

ensureContractNodeTypes();

const KINDS = ['model', 'dashboard', 'connection'] as const;

/**
 * Models, dashboards and connections announce their committed changes through the entity events, as
 * pipelines do: another replica on the same invalidation bus hears a revert and an import of each.
 */
for (const dialect of testDialects()) {
  describe(`Entity events of models, dashboards and connections [${dialect}]`, () => {
    let server: TestServer;
    let a: TestClient;
    let seeded: Seeded;
    let replica: EntityEvents;
    let heard: EntityChange[] = [];

    before(async () => {
      const bus = createLocalInvalidationBus();
      server = await startTestServer(dialect, { bus });
      // A second replica's events on the same bus: it hears what the server announces.
      replica = new EntityEvents(bus);
      for (const kind of KINDS) replica.on(kind, (change) => void heard.push(change));
      a = server.admin;
      seeded = await seedConfiguration(a);
    });
    after(async () => {
      replica?.close();
      await server?.close();
    });
    beforeEach(() => {
      heard = [];
    });

    const of = (type: string) => heard.filter((c) => c.type === type);

    it('a revert of a model, a dashboard and a connection is heard, with its id', async () => {
      const model = await a.put(`/api/v1/engine/models/${seeded.motorId}`, {
        name: 'Motor',
        fields: [{ name: 'speed', type: 'number' }],
        version: 1,
      });
      assert.equal(model.status, 200, model.text);
      heard = [];
      const reverted = await a.post(`/api/v1/engine/models/${seeded.motorId}/versions/1/revert`);
      assert.equal(reverted.status, 200, reverted.text);
      assert.deepEqual(of('model'), [{ type: 'model', organizationId: server.orgId, id: seeded.motorId }]);

      const dashboard = (await a.get(`/api/v1/uns/dashboards/${seeded.dashboardId}`)).body.data;
      const patched = await a.patch(`/api/v1/uns/dashboards/${seeded.dashboardId}`, {
        version: dashboard.version,
        title: 'Renamed',
      });
      assert.equal(patched.status, 200, patched.text);
      heard = [];
      const back = await a.post(`/api/v1/uns/dashboards/${seeded.dashboardId}/versions/1/revert`);
      assert.equal(back.status, 200, back.text);
      assert.deepEqual(of('dashboard'), [
        { type: 'dashboard', organizationId: server.orgId, id: seeded.dashboardId },
      ]);

      const changed = await a.patch(`/api/v1/connections/${seeded.connectionId}`, { description: 'moved' });
      assert.equal(changed.status, 200, changed.text);
      heard = [];
      const undone = await a.post(`/api/v1/connections/${seeded.connectionId}/versions/1/revert`, {});
      assert.equal(undone.status, 200, undone.text);
      assert.deepEqual(of('connection'), [
        { type: 'connection', organizationId: server.orgId, id: seeded.connectionId },
      ]);
    });

    it('a save that changes nothing and a refused change announce nothing', async () => {
      const current = (await a.get(`/api/v1/uns/dashboards/${seeded.dashboardId}`)).body.data;
      const same = await a.patch(`/api/v1/uns/dashboards/${seeded.dashboardId}`, {
        version: current.version,
        title: current.title,
      });
      assert.equal(same.status, 200, same.text);
      const stale = await a.patch(`/api/v1/uns/dashboards/${seeded.dashboardId}`, { version: 1, title: 'x' });
      assert.equal(stale.status, 409, stale.text);
      const bad = await a.patch(`/api/v1/connections/${seeded.connectionId}`, { name: '' });
      assert.equal(bad.status, 400, bad.text);
      assert.deepEqual(heard, []);
    });

    it('an import into another organization is heard for each kind, for that organization', async () => {
      const { bundle } = await exportBundle(a, {
        select: [{ type: 'pipeline', id: seeded.runnerId }],
        include: [{ type: 'dashboard', id: seeded.dashboardId }],
      });
      const organizationId = await buildOrganization(server);
      const b = a.inOrg(organizationId);
      const plan = await validate(b, bundle);
      const inputs = Object.fromEntries(bundle.inputs.map((i: any) => [i.key, `new-${i.path}`]));
      heard = [];
      const done = await b.post(`${IMPORT}/execute`, { planId: plan.planId, inputs });
      assert.equal(done.status, 201, done.text);
      for (const kind of KINDS)
        assert.ok(
          of(kind).some((c) => c.organizationId === organizationId),
          `${kind} not heard: ${JSON.stringify(heard)}`,
        );
      assert.ok(heard.every((c) => c.organizationId === organizationId));
    });
  });
}
