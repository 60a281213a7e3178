import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { testDialects } from '../helpers/dialects.js';
import { buildOrganization } from '../helpers/factories.js';
import type { TestClient } from '../helpers/http-client.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';
import { exportBundle, IMPORT, validate } from './bundle-helpers.js';

/**
 * The Sparkplug edge node's write targets (`sparkplug.edgeNode.writes`) in a bundle: a target naming a
 * connection function brings them along, as `{ $ref }` keys, and an import remaps them to the ids the
 * import gives them.
 */
for (const dialect of testDialects()) {
  describe(`Export and import of the edge node's write targets [${dialect}]`, () => {
    let server: TestServer;
    let a: TestClient;
    const ids: Record<string, string> = {};

    before(async () => {
      server = await startTestServer(dialect);
      a = server.admin;
      const connection = await a.post('/api/v1/connections', {
        name: 'Drive',
        protocol: 'modbus-tcp',
        config: { host: '127.0.0.1', port: 5020, unitId: 1 },
      });
      assert.equal(connection.status, 201, connection.text);
      ids.connection = connection.body.data.id;
      const fn = await a.post(`/api/v1/connections/${ids.connection}/functions`, {
        name: 'set speed',
        type: 'modbus.writeRegisters',
        config: { address: 10, value: '((value))' },
        parameters: [{ name: 'value', type: 'number' }],
      });
      assert.equal(fn.status, 201, fn.text);
      ids.function = fn.body.data.id;
      const version = (await a.get('/api/v1/organizations/settings')).body.data.version;
      const patched = await a.patch('/api/v1/organizations/settings', {
        version,
        sparkplug: {
          edgeNode: {
            groupId: 'Meridian',
            edgeNodeId: 'UNS',
            devices: [{ deviceId: 'Line1', prefix: 'v1/edge/line1' }],
            writes: [
              { deviceId: 'Line1', metric: 'speed', connectionId: ids.connection, functionId: ids.function },
              { deviceId: 'Line1', metric: 'sp/', topic: 'v1/edge/line1/sp' },
            ],
          },
        },
      });
      assert.equal(patched.status, 200, patched.text);
    });
    after(() => server?.close());

    it('exports the connection and function a write target names as bundle keys, and an import remaps them', async () => {
      const { bundle } = await exportBundle(a, { select: [{ type: 'settings' }] });
      assert.deepEqual(
        bundle.entities.connections.map((c: { name: string }) => c.name),
        ['Drive'],
      );
      const writes = bundle.entities.settings.document.sparkplug.edgeNode.writes;
      assert.deepEqual(writes[0], {
        deviceId: 'Line1',
        metric: 'speed',
        connectionId: { $ref: 'connection:Drive' },
        functionId: { $ref: 'function:Drive/set speed' },
      });
      assert.deepEqual(writes[1], { deviceId: 'Line1', metric: 'sp/', topic: 'v1/edge/line1/sp' });

      const b = a.inOrg(await buildOrganization(server));
      const plan = await validate(b, bundle);
      assert.equal(plan.canExecute, true, JSON.stringify(plan.problems));
      const done = await b.post(`${IMPORT}/execute`, { planId: plan.planId });
      assert.equal(done.status, 201, done.text);
      const map = done.body.data.idMap;
      const imported = (await b.get('/api/v1/organizations/settings')).body.data.sparkplug.edgeNode.writes;
      assert.equal(imported[0].connectionId, map['connection:Drive']);
      assert.equal(imported[0].functionId, map['function:Drive/set speed']);
      assert.notEqual(imported[0].connectionId, ids.connection);
      assert.equal(imported[1].topic, 'v1/edge/line1/sp');
    });
  });
}
