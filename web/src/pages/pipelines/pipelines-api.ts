import { ApiFailure, api, orgHeader, toFailure } from '../../api/client';
import type { VersionChange, VersionItem, VersionSource } from '../../components/version-history';

/** One node of a pipeline graph, as the API stores it. */
export interface PipelineNode {
  id: string;
  name: string;
  type: string;
  parameters: Record<string, unknown>;
  settings?: Record<string, unknown>;
  position?: { x: number; y: number };
  notes?: string;
  disabled?: boolean;
}

export interface PipelineEdge {
  id: string;
  source: string;
  sourcePort: string;
  target: string;
}

export interface GraphProblem {
  nodeId: string | null;
  path: string;
  message: string;
}

export interface Pipeline {
  id: string;
  name: string;
  description: string | null;
  labels: Record<string, string>;
  enabled: boolean;
  settings: unknown;
  nodes: PipelineNode[];
  edges: PipelineEdge[];
  problems: GraphProblem[];
  version: number;
  updatedAt: string;
}

/** A node type of the catalogue: its parameter JSON Schema drives the form. */
export interface NodeType {
  type: string;
  category: string;
  title: string;
  description: string;
  parameters: JsonSchema;
  inputs: string[];
  outputs: string[];
  /** More output ports made by the parameters: one `port` (`{index}` filled in) per item of `parameter`. */
  dynamicOutputs?: { parameter: string; port: string };
  sideEffect: 'none' | 'reads-device' | 'writes-device' | 'external';
  testable: boolean;
}

export interface JsonSchema {
  type?: string | string[];
  properties?: Record<string, JsonSchema>;
  required?: string[];
  enum?: unknown[];
  const?: unknown;
  default?: unknown;
  description?: string;
  maxLength?: number;
  minimum?: number;
  maximum?: number;
  items?: JsonSchema;
}

export interface Execution {
  id: string;
  pipelineId: string;
  pipelineVersion: number;
  status: string;
  reason: string | null;
  trigger: { type: string; nodeId: string; firedAt: string };
  input: unknown;
  error: { nodeId: string | null; nodeName: string | null; code: string; message: string } | null;
  retryOf: string | null;
  queuedAt: string;
  durationMs: number | null;
}

export interface NodeRun {
  id: string;
  nodeId: string;
  nodeName: string;
  type: string;
  runIndex: number;
  status: string;
  port: string | null;
  attempts: { n: number; durationMs: number; error: string | null }[];
  input: unknown;
  output: unknown;
  error: { code: string; message: string } | null;
  durationMs: number | null;
}

export interface NodeTestResult {
  output: unknown;
  port: string | null;
  durationMs: number;
  logs: string[];
  error: { code: string; message: string } | null;
}

/** A failed answer with its whole body (`problems`, `currentVersion`). */
export class PipelineFailure extends ApiFailure {
  constructor(
    failure: ApiFailure,
    readonly body: { problems?: GraphProblem[]; currentVersion?: number; path?: string },
  ) {
    super(failure.status, failure.message, failure.code);
  }
}

interface Result {
  data?: unknown;
  error?: unknown;
  response: Response;
}

function unwrapBody<T>(result: Result): T {
  if (result.error === undefined && result.response.ok) return result.data as T;
  const body = (typeof result.error === 'object' && result.error !== null ? result.error : {}) as never;
  throw new PipelineFailure(toFailure(result.response, result.error), body);
}

const header = () => ({ header: orgHeader() });
const path = (id: string) => ({ header: orgHeader(), path: { id } });

export async function listPipelines(search: string) {
  const query = search ? { search, limit: 100 } : { limit: 100 };
  const result = await api.GET('/api/v1/engine/pipelines', { params: { ...header(), query } as never });
  return unwrapBody<{ data: (Pipeline & { nodeCount: number })[] }>(result).data;
}

export async function createPipeline(name: string): Promise<Pipeline> {
  const result = await api.POST('/api/v1/engine/pipelines', { params: header(), body: { name } as never });
  return unwrapBody<{ data: Pipeline }>(result).data;
}

export async function getPipeline(id: string): Promise<Pipeline> {
  return unwrapBody<{ data: Pipeline }>(await api.GET('/api/v1/engine/pipelines/{id}', { params: path(id) }))
    .data;
}

export async function savePipeline(pipeline: Pipeline): Promise<Pipeline> {
  const { name, description, labels, enabled, settings, nodes, edges, version } = pipeline;
  const result = await api.PUT('/api/v1/engine/pipelines/{id}', {
    params: path(pipeline.id),
    body: { name, description, labels, enabled, settings, nodes, edges, version } as never,
  });
  return unwrapBody<{ data: Pipeline }>(result).data;
}

export async function setEnabled(id: string, enabled: boolean): Promise<Pipeline> {
  const result = enabled
    ? await api.POST('/api/v1/engine/pipelines/{id}/enable', { params: path(id) })
    : await api.POST('/api/v1/engine/pipelines/{id}/disable', { params: path(id) });
  return unwrapBody<{ data: Pipeline }>(result).data;
}

/** Queues a run; `force` runs it even in maintenance (Owners and Admins; else it is recorded as skipped). */
export async function runPipeline(id: string, input: unknown, force = false): Promise<Execution> {
  const result = await api.POST('/api/v1/engine/pipelines/{id}/execute', {
    params: path(id),
    body: { ...(input === undefined ? {} : { input }), ...(force ? { force: true } : {}) },
  });
  return unwrapBody<{ data: Execution }>(result).data;
}

export async function listNodeTypes(): Promise<NodeType[]> {
  return unwrapBody<{ data: NodeType[] }>(await api.GET('/api/v1/engine/nodes', { params: header() })).data;
}

/** Tests a node configuration (as edited, not yet saved) with supplied input; nothing is stored. */
export async function testNode(
  node: PipelineNode,
  request: { input?: unknown; nodes?: Record<string, unknown>; confirmWrites?: boolean },
): Promise<NodeTestResult> {
  const body = { node: { type: node.type, parameters: node.parameters }, ...request };
  const result = await api.POST('/api/v1/engine/nodes/test', { params: header(), body: body as never });
  return unwrapBody<{ data: NodeTestResult }>(result).data;
}

/** The pipeline's versions for the shared history: list, the server's diff, revert. */
export function pipelineVersions(id: string): VersionSource<Pipeline> {
  return {
    async list(offset, limit) {
      const result = await api.GET('/api/v1/engine/pipelines/{id}/versions', {
        params: { ...path(id), query: { limit, offset } } as never,
      });
      return unwrapBody<{ data: VersionItem[]; pagination: { total: number } }>(result);
    },
    async diff(version, against) {
      const result = await api.GET('/api/v1/engine/pipelines/{id}/versions/{version}/diff', {
        params: { header: orgHeader(), path: { id, version }, query: { against } },
      });
      return unwrapBody<{ data: { changes: VersionChange[] } }>(result).data.changes;
    },
    async revert(version) {
      const result = await api.POST('/api/v1/engine/pipelines/{id}/versions/{version}/revert', {
        params: { header: orgHeader(), path: { id, version } },
      });
      return unwrapBody<{ data: Pipeline }>(result).data;
    },
  };
}

export async function listExecutions(pipelineId: string): Promise<Execution[]> {
  const result = await api.GET('/api/v1/engine/executions', {
    params: { ...header(), query: { pipelineId, limit: 50 } } as never,
  });
  return unwrapBody<{ data: Execution[] }>(result).data;
}

export async function getExecution(id: string): Promise<Execution> {
  return unwrapBody<{ data: Execution }>(
    await api.GET('/api/v1/engine/executions/{id}', { params: path(id) }),
  ).data;
}

export async function listNodeRuns(id: string): Promise<NodeRun[]> {
  const result = await api.GET('/api/v1/engine/executions/{id}/nodes', {
    params: { ...path(id), query: { limit: 500 } } as never,
  });
  return unwrapBody<{ data: NodeRun[] }>(result).data;
}

export async function retryExecution(
  id: string,
  mode: 'from-failed' | 'from-start',
  version: 'original' | 'current',
): Promise<Execution> {
  const result = await api.POST('/api/v1/engine/executions/{id}/retry', {
    params: path(id),
    body: { mode, version, again: true },
  });
  return unwrapBody<{ data: Execution }>(result).data;
}

/** Renames a stored node; the server rewrites references to its old name in the other nodes. */
export async function renameNode(pipeline: Pipeline, nodeId: string, name: string) {
  const result = await api.POST('/api/v1/engine/pipelines/{id}/nodes/{nodeId}/rename', {
    params: { header: orgHeader(), path: { id: pipeline.id, nodeId } },
    body: { version: pipeline.version, name },
  });
  return unwrapBody<{ data: Pipeline; rewritten: { nodeId: string; path: string }[] }>(result);
}
