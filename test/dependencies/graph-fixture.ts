import assert from 'node:assert/strict';
import type { TestClient } from '../helpers/http-client.js';
import type { TestServer } from '../helpers/test-server.js';

export const GRAPH = '/api/v1/dependencies/graph';

const ok = <T = any>(res: { status: number; text: string; body: any }, status = 201): T => {
  assert.equal(res.status, status, res.text);
  return res.body.data as T;
};

/**
 * A configuration through the API (research §12's acceptance case, and a little more):
 * connection C with functions F (called by P, publishes v1/plc/raw) and F2 (used by nothing);
 * pipeline P calls F, validates with model M and publishes v1/a/b/temp; dashboard D (in folder Fo)
 * shows the filter v1/a/b/+; pipeline R runs P; pipeline Q (disabled) calls F; C2 is an unused connection.
 */
export async function buildConfiguration(server: TestServer, api: TestClient, tag = '') {
  const C = ok(
    await api.post('/api/v1/connections', {
      name: `PLC${tag}`,
      protocol: 'modbus-tcp',
      config: { host: '127.0.0.1', port: 1 },
    }),
  );
  const C2 = ok(
    await api.post('/api/v1/connections', {
      name: `Spare${tag}`,
      protocol: 'modbus-tcp',
      config: { host: '127.0.0.1', port: 1 },
    }),
  );
  const F = ok(
    await api.post(`/api/v1/connections/${C.id}/functions`, {
      name: 'temperature',
      type: 'modbus.readHoldingRegisters',
      config: { address: 1, dataType: 'int16' },
      uns: { topic: 'v1/plc/raw', intervalMs: 60_000 },
    }),
  );
  const F2 = ok(
    await api.post(`/api/v1/connections/${C.id}/functions`, {
      name: 'spare coil',
      type: 'modbus.readCoils',
      config: { address: 7 },
    }),
  );
  const M = ok(
    await api.post('/api/v1/engine/models', {
      name: `Reading${tag}`,
      fields: [{ name: 'v', type: 'number' }],
    }),
  );
  const manual = { id: 'start', name: 'Start', type: 'trigger.manual', parameters: {} };
  const P = ok(
    await api.post('/api/v1/engine/pipelines', {
      name: `Average${tag}`,
      nodes: [
        manual,
        {
          id: 'read',
          name: 'Read PLC',
          type: 'connection.call',
          parameters: { connectionId: C.id, functionId: F.id },
        },
        { id: 'check', name: 'Check', type: 'model.validate', parameters: { modelId: M.id } },
        { id: 'pub', name: 'Publish', type: 'uns.publish', parameters: { topic: 'v1/a/b/temp' } },
      ],
      edges: [
        { source: 'start', target: 'read' },
        { source: 'read', target: 'check' },
        { source: 'check', target: 'pub' },
      ],
    }),
  );
  const R = ok(
    await api.post('/api/v1/engine/pipelines', {
      name: `Nightly${tag}`,
      nodes: [
        manual,
        { id: 'run', name: 'Run average', type: 'pipeline.run', parameters: { pipelineId: P.id } },
      ],
      edges: [{ source: 'start', target: 'run' }],
    }),
  );
  const Q = ok(
    await api.post('/api/v1/engine/pipelines', {
      name: `Draft${tag}`,
      nodes: [
        manual,
        {
          id: 'read',
          name: 'Read',
          type: 'connection.call',
          parameters: { connectionId: C.id, functionId: F.id },
        },
      ],
      edges: [{ source: 'start', target: 'read' }],
    }),
  );
  // Node types of other sessions' work may not be installed yet, so enable refuses them: set the flag
  // directly (the edges do not depend on it; the impact reads it).
  await server.storage.db
    .updateTable('pipelines')
    .set({ enabled: 1 })
    .where('id', 'in', [P.id, R.id])
    .execute();
  const Fo = ok(await api.post('/api/v1/uns/dashboards/folders', { name: `Line${tag}` }));
  const D = ok(
    await api.post('/api/v1/uns/dashboards', {
      title: `Line overview${tag}`,
      folderId: Fo.id,
      panels: [
        {
          id: 'temps',
          type: 'timeseries',
          gridPos: { x: 0, y: 0, w: 12, h: 8 },
          queries: [{ filter: 'v1/a/b/+' }],
        },
      ],
    }),
  );
  return { C, C2, F, F2, M, P, R, Q, Fo, D };
}

export type Configuration = Awaited<ReturnType<typeof buildConfiguration>>;

/** Keys of `<type>:<id>` of a list's entities (topics left out unless asked). */
export const keysOf = (items: { entity: { key: string; type: string } }[], withTopics = false) =>
  items
    .filter((i) => withTopics || i.entity.type !== 'topic')
    .map((i) => i.entity.key)
    .sort();

/** All stored edges of an organization, as comparable text. */
export async function storedEdges(server: TestServer, organizationId: string): Promise<string[]> {
  const rows = await server.storage.db
    .selectFrom('dependency_edges')
    .selectAll()
    .where('organization_id', '=', organizationId)
    .execute();
  return rows
    .map(
      (r) =>
        `${r.owner_type}:${r.owner_id}#${r.seq} ${r.from_type}:${r.from_id} ${r.relation} ${r.to_type}:${r.to_id}`,
    )
    .sort();
}
