import assert from 'node:assert/strict';
import type { TestClient } from '../helpers/http-client.js';

export const PIPELINES = '/api/v1/engine/pipelines';
export const EXECUTIONS = '/api/v1/engine/executions';

export interface NodeRunView {
  nodeId: string;
  status: string;
  port: string | null;
  output: unknown;
  input: unknown;
  error: { code: string; message: string } | null;
}

export interface ExecutionView {
  id: string;
  status: string;
  error: { nodeId: string | null; code: string; message: string } | null;
  trigger: { type: string; source: Record<string, unknown> };
}

/** Waits until the execution has finished; answers it. */
export async function finished(api: TestClient, id: string, timeoutMs = 20_000): Promise<ExecutionView> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const res = await api.get(`${EXECUTIONS}/${id}`);
    assert.equal(res.status, 200, res.text);
    if (!['queued', 'running'].includes(res.body.data.status)) return res.body.data;
    if (Date.now() > until) assert.fail(`execution ${id} still ${res.body.data.status}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Creates a pipeline: a manual trigger `start` feeding `nodes[0]`, then each node the next (history detail full). */
export async function createChain(
  api: TestClient,
  name: string,
  nodes: {
    id: string;
    type: string;
    parameters?: Record<string, unknown>;
    settings?: unknown;
    port?: string;
  }[],
): Promise<string> {
  const res = await api.post(PIPELINES, {
    name,
    settings: { historyDetail: 'full' },
    nodes: [
      { id: 'start', name: 'Start', type: 'trigger.manual' },
      ...nodes.map(({ port: _, ...n }) => ({ name: n.id, ...n })),
    ],
    edges: nodes.map((n, i) => ({
      source: i === 0 ? 'start' : nodes[i - 1]!.id,
      sourcePort: i === 0 ? 'out' : (nodes[i - 1]!.port ?? 'out'),
      target: n.id,
    })),
  });
  assert.equal(res.status, 201, res.text);
  assert.deepEqual(res.body.data.problems, [], res.text);
  return res.body.data.id;
}

/** Runs a pipeline by hand with `input` to its end; answers the execution and its node runs by node id. */
export async function runOnce(api: TestClient, pipelineId: string, input: unknown) {
  const res = await api.post(`${PIPELINES}/${pipelineId}/execute`, { input });
  assert.equal(res.status, 202, res.text);
  const execution = await finished(api, res.body.data.id);
  const runs = await api.get(`${EXECUTIONS}/${execution.id}/nodes`);
  assert.equal(runs.status, 200, runs.text);
  const byNode = new Map<string, NodeRunView>(runs.body.data.map((r: NodeRunView) => [r.nodeId, r]));
  return { execution, runs: byNode };
}

/** The problems a pipeline with one node of `type` and `parameters` has, as `path: message` lines. */
export async function problemsOf(api: TestClient, type: string, parameters: unknown): Promise<string[]> {
  const res = await api.post(PIPELINES, {
    name: `Problems ${Math.random().toString(36).slice(2)}`,
    nodes: [
      { id: 'start', name: 'Start', type: 'trigger.manual' },
      { id: 'n', name: 'N', type, parameters },
    ],
    edges: [{ source: 'start', target: 'n' }],
  });
  assert.equal(res.status, 201, res.text);
  return res.body.data.problems.map((p: { path: string; message: string }) => `${p.path}: ${p.message}`);
}
