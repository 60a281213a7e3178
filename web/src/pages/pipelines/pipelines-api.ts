import { ApiFailure, api, orgHeader, toFailure } from '../../api/client';
import type { paths } from '../../api/schema';
import type { VersionChange, VersionItem, VersionSource } from '../../components/version-history';

// One source of API types: every shape below is the OpenAPI document's, generated into schema.d.ts.
type Json<T> = T extends { content: { 'application/json': infer B } } ? B : never;
type DataOf<T> = Json<T> extends { data: infer D } ? D : never;

type PipelineBody = Json<NonNullable<paths['/api/v1/engine/pipelines/{id}']['put']['requestBody']>>;
type NodeBody = NonNullable<PipelineBody['nodes']>[number];
type EdgeBody = NonNullable<PipelineBody['edges']>[number];
/**
 * One node of a pipeline graph: the answer lists the nodes (`unknown[]` in the document) in the shape
 * the body of a save takes, with the defaults filled in (parameters `{}`).
 */
export type PipelineNode = NodeBody & { parameters: Record<string, unknown> };
/** An edge as stored: its id given and its port filled in (default `out`). */
export type PipelineEdge = Required<EdgeBody>;
type PipelineAnswer = DataOf<paths['/api/v1/engine/pipelines/{id}']['get']['responses'][200]>;
/** A pipeline as the API answers it (graph, problems, version). */
export type Pipeline = Omit<PipelineAnswer, 'nodes' | 'edges'> & {
  nodes: PipelineNode[];
  edges: PipelineEdge[];
};
/** A pipeline of the list, with its node count. */
export type PipelineSummary = Json<
  paths['/api/v1/engine/pipelines']['get']['responses'][200]
>['data'][number];
export type GraphProblem = Pipeline['problems'][number];
/** A node type of the catalogue: its parameter JSON Schema drives the form. */
export type NodeType = DataOf<paths['/api/v1/engine/nodes']['get']['responses'][200]>[number];
export type Execution = DataOf<paths['/api/v1/engine/executions/{id}']['get']['responses'][200]>;
export type NodeRun = DataOf<paths['/api/v1/engine/executions/{id}/nodes']['get']['responses'][200]>[number];
export type NodeTestResult = DataOf<paths['/api/v1/engine/nodes/test']['post']['responses'][200]>;

/** The part of JSON Schema that the node forms read (the catalogue's schemas are open-ended). */
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
  return unwrapBody<{ data: PipelineSummary[] }>(result).data;
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

/**
 * Queues a run with `debug` (every node's input and output kept, whatever the pipeline's history detail,
 * for the debug panel); `force` runs it even in maintenance (Owners and Admins; else it is recorded as
 * skipped).
 */
export async function runPipeline(id: string, input: unknown, force = false): Promise<Execution> {
  const result = await api.POST('/api/v1/engine/pipelines/{id}/execute', {
    params: path(id),
    body: { ...(input === undefined ? {} : { input }), ...(force ? { force: true } : {}), debug: true },
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
