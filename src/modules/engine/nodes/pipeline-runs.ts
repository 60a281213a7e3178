import type { Kysely } from 'kysely';
import type { Database } from '../../../storage/tables.js';
import { graphProblems } from '../pipelines/pipeline-definition.js';
import type { PipelinesRepository } from '../pipelines/pipelines.repository.js';
import {
  type ExecutionRow,
  ExecutionsRepository,
  type ExecutionTrigger,
} from '../queue/executions.repository.js';
import { NodeError } from './node-types.js';

/** How many pipelines deep `pipeline.run` may nest (the pipeline that started the chain is depth 0). */
export const MAX_PIPELINE_DEPTH = 8;

const POLL_MS = 100;

export interface PipelineRunRequest {
  pipelineId: string;
  input: unknown;
  wait: boolean;
  /** How long to wait for the execution to finish. */
  timeoutMs: number;
  /** The execution that asks (absent for a tested node): its pipeline, and the chain that led to it. */
  parent?: { executionId: string; pipelineId: string; nodeId: string; trigger: ExecutionTrigger };
  /** Resuming after a crash finds the execution queued before it instead of queueing another. */
  idempotencyKey?: string;
}

export interface PipelineRunResult {
  executionId: string;
  pipelineId: string;
  status: ExecutionRow['status'];
  /** With wait: outputs of the nodes that end the graph, by name (kept when its history detail is full). */
  outputs?: Record<string, unknown>;
}

/** The pipelines that led to an execution, oldest first (from its trigger's source). */
export function chainOf(trigger: ExecutionTrigger | undefined, pipelineId: string | undefined): string[] {
  if (!trigger || pipelineId === undefined) return [];
  const before = trigger.type === 'pipeline' ? trigger.source.chain : undefined;
  return [...(Array.isArray(before) ? before.filter((p) => typeof p === 'string') : []), pipelineId];
}

/**
 * Queues an execution of another pipeline of the organization from its first manual trigger (trigger
 * type `pipeline`), and with `wait` waits for it to end. Refused: a chain deeper than
 * MAX_PIPELINE_DEPTH, and waiting for a pipeline already in the chain (it would wait for itself).
 */
export async function runPipeline(
  deps: {
    db: Kysely<Database>;
    pipelines: PipelinesRepository;
    executions: ExecutionsRepository;
    now: () => number;
    onQueued: () => void;
  },
  organizationId: string,
  request: PipelineRunRequest,
): Promise<PipelineRunResult> {
  const chain = chainOf(request.parent?.trigger, request.parent?.pipelineId);
  if (chain.length >= MAX_PIPELINE_DEPTH)
    throw new NodeError(
      'too_deep',
      `pipelines run each other ${chain.length} deep (${chain.join(' > ')}); the limit is ${MAX_PIPELINE_DEPTH}`,
    );
  if (request.wait && chain.includes(request.pipelineId))
    throw new NodeError(
      'cycle',
      `pipeline ${request.pipelineId} is already running in this chain (${chain.join(' > ')}); waiting for it would wait for itself`,
    );
  const pipeline = await deps.pipelines.get(organizationId, request.pipelineId);
  if (!pipeline) throw new NodeError('not_found', `pipeline ${request.pipelineId} not found`);
  const problems = graphProblems(pipeline.nodes, pipeline.edges);
  if (problems.length > 0)
    throw new NodeError(
      'invalid_pipeline',
      `pipeline ${pipeline.name} cannot run: ${problems[0]!.path}: ${problems[0]!.message}`,
    );
  const trigger = pipeline.nodes.find((n) => n.type === 'trigger.manual' && !n.disabled);
  if (!trigger)
    throw new NodeError(
      'invalid_pipeline',
      `pipeline ${pipeline.name} has no manual trigger node to start from`,
    );
  const now = deps.now();
  const entry = {
    organizationId,
    pipeline,
    trigger: {
      type: 'pipeline',
      nodeId: trigger.id,
      firedAt: now,
      source: request.parent
        ? {
            executionId: request.parent.executionId,
            pipelineId: request.parent.pipelineId,
            nodeId: request.parent.nodeId,
            chain,
          }
        : { chain },
    },
    input: request.input,
    now,
  };
  let execution: ExecutionRow | undefined;
  if (request.idempotencyKey === undefined) execution = await deps.executions.enqueue(entry);
  else {
    execution = await deps.executions.enqueue({ ...entry, idempotencyKey: request.idempotencyKey });
    execution ??= await byIdempotencyKey(deps, organizationId, request.idempotencyKey);
    if (!execution) throw new Error(`the execution queued as ${request.idempotencyKey} is gone`);
  }
  deps.onQueued();
  if (!request.wait) return { executionId: execution.id, pipelineId: pipeline.id, status: execution.status };
  return waitFor(deps.executions, execution, request.timeoutMs, deps.now);
}

async function byIdempotencyKey(
  deps: { db: Kysely<Database>; executions: ExecutionsRepository },
  organizationId: string,
  key: string,
) {
  const row = await deps.db
    .selectFrom('engine_executions')
    .select('id')
    .where('organization_id', '=', organizationId)
    .where('idempotency_key', '=', key)
    .executeTakeFirst();
  return row && deps.executions.get(organizationId, row.id);
}

async function waitFor(
  executions: ExecutionsRepository,
  queued: ExecutionRow,
  timeoutMs: number,
  now: () => number,
): Promise<PipelineRunResult> {
  const until = now() + timeoutMs;
  let execution = queued;
  while (!ExecutionsRepository.isFinal(execution.status)) {
    if (now() > until)
      throw new NodeError(
        'timeout',
        `execution ${execution.id} of the pipeline was still ${execution.status} after ${timeoutMs} ms (the node timeout)`,
      );
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
    execution = (await executions.get(execution.organizationId, execution.id)) ?? execution;
  }
  if (execution.status !== 'completed' && execution.status !== 'completed_with_errors')
    throw new NodeError(
      'pipeline_failed',
      `execution ${execution.id} ended ${execution.status}` +
        (execution.error ? `: ${execution.error.nodeName ?? ''} ${execution.error.message}`.trimEnd() : ''),
    );
  const { nodes, edges } = execution.definition;
  const ends = new Set(nodes.filter((n) => !edges.some((e) => e.source === n.id)).map((n) => n.id));
  const outputs: Record<string, unknown> = {};
  for (const run of await executions.nodeRuns(execution.id))
    if (run.status === 'succeeded' && ends.has(run.nodeId)) outputs[run.nodeName] = run.output;
  return { executionId: execution.id, pipelineId: execution.pipelineId, status: execution.status, outputs };
}
