import assert from 'node:assert/strict';
import { NODE_TYPES, nodeType } from '../../src/modules/engine/nodes/node-types.js';
import type { TestClient } from '../helpers/http-client.js';

export const EXPORT = '/api/v1/dependencies/export';
export const IMPORT = '/api/v1/dependencies/import';

/** Secret values stored in the seeded connection: a bundle must never hold them. */
export const SECRETS = { password: 'pw-Zq81-never-exported', bearerToken: 'tok-9fK2x-never-exported' };

/**
 * The node types of NODE-CONTRACT.md that carry references (connection.call, model.validate,
 * pipeline.run) come from other branches. Until this build has them, stand-ins with the contract's
 * parameter names are registered so that a pipeline using them can be imported; they never run here.
 */
export function ensureContractNodeTypes(): void {
  for (const type of ['connection.call', 'model.validate', 'pipeline.run']) {
    if (nodeType(type)) continue;
    NODE_TYPES.push({
      type,
      typeVersion: 1,
      category: 'transform',
      title: type,
      description: `stand-in for ${type} (NODE-CONTRACT.md)`,
      parameters: { type: 'object' },
      inputs: ['main'],
      outputs: ['main'],
      sideEffect: 'none',
      testable: false,
      expressionParameters: [],
      run: async () => {
        throw new Error(`${type} stand-in does not run`);
      },
    });
  }
}

export interface Seeded {
  connectionId: string;
  functionId: string;
  motorId: string;
  lineId: string;
  pollId: string;
  runnerId: string;
  plantId: string;
  linesId: string;
  dashboardId: string;
}

async function created(res: Promise<{ status: number; body: any; text: string }>) {
  const r = await res;
  assert.equal(r.status, 201, r.text);
  return r.body.data.id as string;
}

/**
 * A configuration with every kind of reference: a REST connection with two secrets and a function,
 * models Motor and Line (Line refers to Motor), pipelines Poll (calls the function, validates with
 * Line) and Runner (runs Poll), folders Plant/Lines and a dashboard in Lines.
 */
export async function seedConfiguration(api: TestClient): Promise<Seeded> {
  const connectionId = await created(
    api.post('/api/v1/connections', {
      name: 'PLC line 1',
      description: 'Line 1 gateway',
      protocol: 'rest',
      config: { baseUrl: 'http://127.0.0.1:9/api', username: 'operator', ...SECRETS },
      labels: ['line1'],
    }),
  );
  const functionId = await created(
    api.post(`/api/v1/connections/${connectionId}/functions`, {
      name: 'read temperature',
      type: 'rest.get',
      config: { path: '/temp' },
    }),
  );
  const motorId = await created(
    api.post('/api/v1/engine/models', { name: 'Motor', fields: [{ name: 'current', type: 'number' }] }),
  );
  const lineId = await created(
    api.post('/api/v1/engine/models', {
      name: 'Line',
      fields: [{ name: 'motor', type: 'model', model: { id: motorId } }],
    }),
  );
  const pollId = await created(
    api.post('/api/v1/engine/pipelines', {
      name: 'Poll line 1',
      nodes: [
        { id: 'start', name: 'Start', type: 'trigger.manual', parameters: {} },
        { id: 'call', name: 'Read', type: 'connection.call', parameters: { connectionId, functionId } },
        { id: 'check', name: 'Check', type: 'model.validate', parameters: { modelId: lineId } },
        { id: 'out', name: 'Publish', type: 'uns.publish', parameters: { topic: 'v1/acme/line1/temp' } },
      ],
      edges: [
        { id: 'e1', source: 'start', sourcePort: 'main', target: 'call' },
        { id: 'e2', source: 'call', sourcePort: 'main', target: 'check' },
        { id: 'e3', source: 'check', sourcePort: 'main', target: 'out' },
      ],
    }),
  );
  const runnerId = await created(
    api.post('/api/v1/engine/pipelines', {
      name: 'Runner',
      nodes: [
        { id: 'start', name: 'Start', type: 'trigger.manual', parameters: {} },
        { id: 'run', name: 'Run poll', type: 'pipeline.run', parameters: { pipelineId: pollId } },
        { id: 'dyn', name: 'Dynamic', type: 'pipeline.run', parameters: { pipelineId: '{{ $.target }}' } },
      ],
      edges: [{ id: 'e1', source: 'start', sourcePort: 'main', target: 'run' }],
    }),
  );
  const plantId = await created(api.post('/api/v1/uns/dashboards/folders', { name: 'Plant' }));
  const linesId = await created(
    api.post('/api/v1/uns/dashboards/folders', { name: 'Lines', parentId: plantId }),
  );
  const dashboardId = await created(
    api.post('/api/v1/uns/dashboards', {
      title: 'Line overview',
      folderId: linesId,
      tags: ['line1'],
      panels: [
        {
          type: 'stat',
          title: 'Temperature',
          gridPos: { x: 0, y: 0, w: 6, h: 4 },
          queries: [{ topic: 'v1/acme/line1/temp' }],
        },
      ],
    }),
  );
  return { connectionId, functionId, motorId, lineId, pollId, runnerId, plantId, linesId, dashboardId };
}

/** Exports a selection and downloads the bundle: its parsed form and its bytes. */
export async function exportBundle(api: TestClient, body: unknown) {
  const generated = await api.post(EXPORT, body);
  assert.equal(generated.status, 201, generated.text);
  const download = await api.get(`${EXPORT}/${generated.body.data.id}/download`);
  assert.equal(download.status, 200, download.text);
  return {
    summary: generated.body.data,
    text: download.text,
    bundle: JSON.parse(download.text),
    headers: download.headers,
  };
}

/** Validates a bundle; answers the plan (asserting 200). */
export async function validate(api: TestClient, bundle: unknown, options: Record<string, unknown> = {}) {
  const res = await api.post(`${IMPORT}/validate`, { bundle, options });
  assert.equal(res.status, 200, res.text);
  return res.body.data;
}

/** The bundle without what legitimately differs between two exports: ids, times, checksum. */
export function comparable(bundle: any): unknown {
  const { checksum: _c, exportedAt: _e, ...rest } = bundle;
  return JSON.parse(JSON.stringify(rest), (key, value) => (key === 'sourceId' ? undefined : value));
}
