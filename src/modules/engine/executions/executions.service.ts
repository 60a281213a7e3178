import type { Actor } from '../../../platform/actor.js';
import type { Clock } from '../../../platform/clock.js';
import { badRequest, conflict, notFound, withDetails } from '../../../platform/errors.js';
import type { NodeServices } from '../nodes/node-services.js';
import { nodeType, sideEffectOfNode } from '../nodes/node-types.js';
import { loopBodies } from '../pipelines/loop-bodies.js';
import { graphProblems } from '../pipelines/pipeline-definition.js';
import type { PipelineRow, PipelinesRepository } from '../pipelines/pipelines.repository.js';
import type {
  ExecutionDefinition,
  ExecutionRow,
  ExecutionsRepository,
} from '../queue/executions.repository.js';
import { sideEffectOf } from '../runtime/node-runner.js';

const RETRYABLE: ExecutionRow['status'][] = ['failed', 'completed_with_errors', 'cancelled'];

export interface RetryRequest {
  mode?: 'from-failed' | 'from-start' | undefined;
  version?: 'original' | 'current' | undefined;
  input?: unknown;
  again?: boolean | undefined;
  confirmWrites?: boolean | undefined;
}

/** Execution operations beyond reads: retry, cancel, delete. */
export class ExecutionsService {
  constructor(
    private readonly deps: {
      repo: ExecutionsRepository;
      pipelines: PipelinesRepository;
      clock: Clock;
      onQueued: () => void;
      /** To ask nodes whose parameters decide their side effect (a connection call that writes). */
      services?: NodeServices;
    },
  ) {}

  /** Whether `node` writes to a device: by its type, or by its parameters (sideEffectOfNode). */
  private async writes(organizationId: string, node: ExecutionDefinition['nodes'][number]) {
    if (sideEffectOf(node) === 'writes-device') return true;
    const type = nodeType(node.type);
    if (!type?.sideEffectOf) return false;
    const context = { organizationId, services: this.deps.services };
    return (await sideEffectOfNode(type, node.parameters, context)) === 'writes-device';
  }

  async get(organizationId: string, id: string): Promise<ExecutionRow> {
    const execution = await this.deps.repo.get(organizationId, id);
    if (!execution) throw notFound('execution');
    return execution;
  }

  /**
   * Queues a new execution that retries `id`: from the start (with the original input unless `input`
   * is given) or from the failed node (with the input that node failed on; upstream nodes do not run
   * again), on the original version or the pipeline's current one.
   */
  async retry(
    organizationId: string,
    id: string,
    request: RetryRequest,
    actor: Actor,
  ): Promise<ExecutionRow> {
    const original = await this.get(organizationId, id);
    if (!RETRYABLE.includes(original.status))
      throw conflict(
        `an execution in status ${original.status} cannot be retried; only ${RETRYABLE.join(', ')}`,
      );
    const earlier = await this.deps.repo.retriesOf(organizationId, id);
    if (earlier.length > 0 && request.again !== true)
      throw withDetails(
        conflict(
          `the execution was already retried by ${earlier.join(', ')}; send again: true to retry it once more`,
        ),
        {
          retriedBy: earlier,
        },
      );
    let definition: ExecutionDefinition = original.definition;
    let version = original.pipelineVersion;
    let pipeline: PipelineRow | undefined;
    if (request.version === 'current') {
      pipeline = await this.deps.pipelines.get(organizationId, original.pipelineId);
      if (!pipeline) throw conflict('the pipeline no longer exists; retry on the original version');
      const problems = graphProblems(pipeline.nodes, pipeline.edges);
      if (problems.length > 0)
        throw withDetails(
          conflict('the current version of the pipeline is invalid; fix it or retry on the original version'),
          {
            problems,
          },
        );
      definition = { nodes: pipeline.nodes, edges: pipeline.edges, settings: pipeline.settings };
      version = pipeline.version;
    }
    const mode = request.mode ?? 'from-failed';
    // A retry's trigger names the node it starts at; `source` says what it retries and how.
    const first = original.trigger.type === 'retry' ? original.trigger.source : null;
    const triggerNodeId = (first?.triggerNodeId as string | undefined) ?? original.trigger.nodeId;
    let trigger: ExecutionRow['trigger'] = {
      type: 'retry',
      nodeId: triggerNodeId,
      firedAt: this.deps.clock.now(),
      source: {
        retryOf: id,
        userId: actor.userId,
        mode,
        trigger: (first?.trigger as string | undefined) ?? original.trigger.type,
        triggerNodeId,
      },
    };
    let input = request.input === undefined ? original.input : request.input;
    let startAt = trigger.nodeId;
    if (mode === 'from-failed') {
      const failed = (await this.deps.repo.nodeRuns(id)).find((r) => r.status === 'failed');
      if (!failed)
        throw withDetails(badRequest('/mode: the execution has no failed node run; retry from-start'), {
          path: '/mode',
        });
      if (!definition.nodes.some((n) => n.id === failed.nodeId))
        throw conflict(
          `the failed node ${failed.nodeId} is not in the ${request.version ?? 'original'} version`,
        );
      for (const [loopId, body] of loopBodies(definition.nodes, definition.edges))
        if (body.has(failed.nodeId))
          throw conflict(
            `the failed node ${failed.nodeId} ran inside the for-each ${loopId}; retry from-start to run the loop again`,
          );
      startAt = failed.nodeId;
      trigger = { ...trigger, nodeId: failed.nodeId };
      input = request.input === undefined ? failed.input : request.input;
    }
    let writer: ExecutionDefinition['nodes'][number] | undefined;
    for (const node of downstream(definition, startAt))
      if (await this.writes(organizationId, node)) {
        writer = node;
        break;
      }
    if (writer && request.confirmWrites !== true)
      throw withDetails(
        badRequest(
          `/confirmWrites: the retry would run ${writer.name}, which writes to a device; send confirmWrites: true`,
        ),
        { path: '/confirmWrites' },
      );
    const now = this.deps.clock.now();
    const queued = await this.deps.repo.enqueue({
      organizationId,
      pipeline:
        pipeline ??
        ({
          id: original.pipelineId,
          version,
          settings: definition.settings,
          nodes: definition.nodes,
          edges: definition.edges,
        } as PipelineRow),
      definition,
      version,
      trigger,
      input,
      now,
      retryOf: id,
    });
    this.deps.onQueued();
    return queued;
  }

  async cancel(organizationId: string, id: string): Promise<ExecutionRow> {
    const execution = await this.get(organizationId, id);
    if (!(await this.deps.repo.cancel(organizationId, id, this.deps.clock.now())))
      throw conflict(`an execution in status ${execution.status} cannot be cancelled`);
    return this.get(organizationId, id);
  }

  async delete(organizationId: string, id: string): Promise<void> {
    const execution = await this.get(organizationId, id);
    if (!(await this.deps.repo.delete(organizationId, id)))
      throw conflict(`an execution in status ${execution.status} cannot be deleted; cancel it first`);
  }
}

/** The node `start` and every node downstream of it. */
function downstream(definition: ExecutionDefinition, start: string) {
  const reached = new Set<string>([start]);
  const stack = [start];
  while (stack.length > 0) {
    const id = stack.pop()!;
    for (const e of definition.edges)
      if (e.source === id && !reached.has(e.target)) {
        reached.add(e.target);
        stack.push(e.target);
      }
  }
  return definition.nodes.filter((n) => reached.has(n.id));
}
