import assert from 'node:assert/strict';
import type { PipelineRow } from '../../src/modules/engine/pipelines/pipelines.repository.js';
import { ExecutionsRepository } from '../../src/modules/engine/queue/executions.repository.js';
import type { DialectName } from '../../src/storage/database.js';
import type { TestClient } from '../helpers/http-client.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';
import { createPat } from '../uns/uns-helpers.js';

export const PIPELINES = '/api/v1/engine/pipelines';
export const EXECUTIONS = '/api/v1/engine/executions';
export const manual = { id: 'start', name: 'Start', type: 'trigger.manual' };

export interface NodeRunView {
  id: string;
  nodeId: string;
  nodeName: string;
  status: string;
  port: string | null;
  output: unknown;
  input: unknown;
  runIndex: number;
  durationMs: number | null;
  iteration: number | null;
  iterationKey: string | null;
  attempts: { n: number; startedAt: string; durationMs: number; error: string | null }[];
  error: { code: string; message: string } | null;
}

/** Waits until the execution is in one of `statuses` (default: any final one); answers it. */
export async function executionIn(
  api: TestClient,
  id: string,
  statuses?: string[],
  timeoutMs = 20_000,
): Promise<{ id: string; status: string; [key: string]: unknown }> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const res = await api.get(`${EXECUTIONS}/${id}`);
    assert.equal(res.status, 200, res.text);
    const status = res.body.data.status as string;
    if (statuses ? statuses.includes(status) : !['queued', 'running', 'waiting'].includes(status))
      return res.body.data;
    if (Date.now() > until) assert.fail(`execution ${id} still ${status}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Starts a pipeline by hand; answers the queued execution's id. */
export async function execute(api: TestClient, pipelineId: string, input?: unknown): Promise<string> {
  const res = await api.post(`${PIPELINES}/${pipelineId}/execute`, input === undefined ? {} : { input });
  assert.equal(res.status, 202, res.text);
  return res.body.data.id;
}

/** Every node run of an execution (all pages). */
export async function allNodeRuns(api: TestClient, executionId: string): Promise<NodeRunView[]> {
  const runs: NodeRunView[] = [];
  for (let offset = 0; ; offset += 200) {
    const res = await api.get(`${EXECUTIONS}/${executionId}/nodes?limit=200&offset=${offset}`);
    assert.equal(res.status, 200, res.text);
    runs.push(...res.body.data);
    if (runs.length >= res.body.pagination.total) return runs;
  }
}

/** Creates a pipeline that must be valid; answers its id. */
export async function createValid(api: TestClient, body: Record<string, unknown>): Promise<string> {
  const res = await api.post(PIPELINES, body);
  assert.equal(res.status, 201, res.text);
  assert.deepEqual(res.body.data.problems, [], res.text);
  return res.body.data.id;
}

/** A test server, and a client of its organization with the pipeline scopes. */
export async function pipelineServer(dialect: DialectName): Promise<{ server: TestServer; api: TestClient }> {
  const server = await startTestServer(dialect);
  const api = server.client.as({
    token: await createPat(server.admin, ['pipelines:read', 'pipelines:write']),
    org: server.orgId,
  });
  return { server, api };
}

/**
 * A test server whose own engine is stopped, so that only the test claims executions; a client with the
 * pipeline scopes, and a repository of the server's executions.
 */
export async function serverWithoutEngine(
  dialect: DialectName,
): Promise<{ server: TestServer; api: TestClient; repo: ExecutionsRepository }> {
  const { server, api } = await pipelineServer(dialect);
  await server.app.engine.stop();
  return { server, api, repo: new ExecutionsRepository(server.storage.db) };
}

/** Creates a pipeline through the API; answers it as the repository reads it (to enqueue with). */
export async function createPipelineRow(api: TestClient, organizationId: string, body: object) {
  const res = await api.post(PIPELINES, body);
  assert.equal(res.status, 201, res.text);
  return { ...res.body.data, organizationId } as PipelineRow;
}
