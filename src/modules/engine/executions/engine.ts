import { randomUUID } from 'node:crypto';
import type { FastifyBaseLogger } from 'fastify';
import type { Clock } from '../../../platform/clock.js';
import { type NodeContext, NodeError, type NodeResult, nodeType } from '../nodes/node-types.js';
import type { PipelineNode, RetrySettings } from '../pipelines/pipeline-definition.js';
import { type Sandbox, SandboxError } from '../sandbox/sandbox.js';
import type { ExecutionRow, ExecutionsRepository, NodeRunRow } from './executions.repository.js';

export interface EngineOptions {
  repo: ExecutionsRepository;
  sandbox: Sandbox;
  clock: Clock;
  log: FastifyBaseLogger;
  publish: NodeContext['publish'] extends (...a: infer A) => infer R
    ? (organizationId: string, ...a: A) => R
    : never;
  /** How long a claim holds without renewal; another replica takes over an execution whose lease expired. */
  leaseMs?: number;
  /** The fallback poll when no wake-up arrives. */
  pollMs?: number;
  /** Executions run at the same time by this replica. */
  concurrency?: number;
  /** Told once of each execution this replica finished (pipeline-finished triggers); must not throw. */
  onFinished?: (
    execution: ExecutionRow,
    status: ExecutionRow['status'],
    error: ExecutionRow['error'],
  ) => void;
}

const DEFAULT_NODE_TIMEOUT_SECONDS = 10;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A node failure as stored and shown: a code and a message, never a stack trace. */
function describe(error: unknown): { code: string; message: string } {
  if (error instanceof SandboxError || error instanceof NodeError)
    return { code: error.code, message: error.message };
  return { code: 'node_error', message: error instanceof Error ? error.message : String(error) };
}

/**
 * The execution engine of one replica: claims queued executions (or ones whose lease expired) from the
 * database, runs their graph node by node in topological order, stores each node run as it finishes,
 * and renews its lease while it works. Expressions and code run in the sandbox thread, never here.
 */
export class ExecutionEngine {
  readonly replica = randomUUID();
  private readonly leaseMs: number;
  private readonly pollMs: number;
  private readonly concurrency: number;
  private running = 0;
  private timer: NodeJS.Timeout | undefined;
  private stopped = true;
  private polling = false;
  private wokenWhilePolling = false;
  private readonly inFlight = new Set<Promise<void>>();

  constructor(private readonly options: EngineOptions) {
    this.leaseMs = options.leaseMs ?? 30_000;
    this.pollMs = options.pollMs ?? 1000;
    this.concurrency = options.concurrency ?? 4;
  }

  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.schedule(0);
  }

  /** Stops claiming and waits for the executions in progress. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await Promise.allSettled([...this.inFlight]);
  }

  /** Looks for work now (an execution was queued on this replica). */
  wake(): void {
    if (!this.stopped) this.schedule(0);
  }

  private schedule(ms: number): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.poll(), ms);
    this.timer.unref();
  }

  private async poll(): Promise<void> {
    if (this.stopped) return;
    // A wake-up while claiming is not lost: the claim loop runs again at once after this one.
    if (this.polling) {
      this.wokenWhilePolling = true;
      return;
    }
    this.polling = true;
    this.wokenWhilePolling = false;
    try {
      while (!this.stopped && this.running < this.concurrency) {
        const execution = await this.options.repo.claim(this.replica, this.options.clock.now(), this.leaseMs);
        if (!execution) break;
        this.running++;
        const work = this.run(execution)
          .catch((error) =>
            this.options.log.error({ err: error, execution: execution.id }, 'execution failed'),
          )
          .finally(() => {
            this.running--;
            this.inFlight.delete(work);
            this.wake();
          });
        this.inFlight.add(work);
      }
    } catch (error) {
      this.options.log.warn({ err: error }, 'the engine could not claim executions');
    } finally {
      this.polling = false;
      if (!this.stopped) this.schedule(this.wokenWhilePolling ? 0 : this.pollMs);
    }
  }

  /** Runs one claimed execution to its end (or until its lease is lost). */
  async run(execution: ExecutionRow): Promise<void> {
    const { repo, clock } = this.options;
    let leaseLost = false;
    const renew = setInterval(
      () =>
        void repo
          .renewLease(execution.id, this.replica, clock.now() + this.leaseMs)
          .then((held) => {
            if (!held) leaseLost = true;
          })
          .catch(() => {}),
      Math.max(50, Math.floor(this.leaseMs / 3)),
    );
    renew.unref();
    try {
      const outcome = await this.runGraph(execution, () => leaseLost);
      if (leaseLost) return;
      const finished = await repo.finish(
        execution.id,
        this.replica,
        outcome.status,
        clock.now(),
        outcome.error,
        outcome.reason,
      );
      if (finished) this.options.onFinished?.(execution, outcome.status, outcome.error);
    } finally {
      clearInterval(renew);
    }
  }

  private async runGraph(
    execution: ExecutionRow,
    leaseLost: () => boolean,
  ): Promise<{ status: ExecutionRow['status']; error: ExecutionRow['error']; reason: string | null }> {
    const { repo, clock } = this.options;
    const { nodes, edges, settings } = execution.definition;
    const detail = settings.historyDetail;
    const deadline = (execution.startedAt ?? clock.now()) + settings.timeoutSeconds * 1000;
    // Runs stored by an earlier claim (this execution is resumed after its replica died).
    const earlier = new Map<string, NodeRunRow>();
    for (const run of await repo.nodeRuns(execution.id)) earlier.set(run.nodeId, run);
    for (const run of earlier.values()) {
      if (run.status === 'running' && nodeType(run.type)?.sideEffect === 'writes-device')
        return {
          status: 'failed',
          reason: 'interrupted',
          error: {
            nodeId: run.nodeId,
            nodeName: run.nodeName,
            code: 'interrupted',
            message:
              'the execution was interrupted while this node wrote to a device; it is not re-run by itself',
          },
        };
    }
    const order = topologicalOrder(nodes, edges);
    const activated = new Map<string, unknown>([[execution.trigger.nodeId, execution.input]]);
    const outputs: Record<string, { data: unknown }> = {};
    // A retry from the failed node starts there; `$node` sees the outputs the original kept.
    if (execution.retryOf !== null && execution.trigger.type === 'retry')
      for (const run of await repo.nodeRuns(execution.retryOf))
        if (run.status === 'succeeded' && run.output !== null) outputs[run.nodeName] = { data: run.output };
    let hadErrors = false;
    for (const node of order) {
      if (leaseLost()) return { status: 'running', error: null, reason: null };
      if (!activated.has(node.id)) continue;
      if (clock.now() > deadline)
        return {
          status: 'failed',
          reason: 'timeout',
          error: {
            nodeId: node.id,
            nodeName: node.name,
            code: 'timeout',
            message: `the execution exceeded its time limit of ${settings.timeoutSeconds} s`,
          },
        };
      const input = activated.get(node.id);
      const type = nodeType(node.type)!;
      let result: NodeResult;
      const before = earlier.get(node.id);
      // A node that finished before the crash is not run again when its output was kept (history detail
      // full, or a device write, whose output is always kept); otherwise it runs again.
      if (
        before?.status === 'succeeded' &&
        before.port !== null &&
        (detail === 'full' || type.sideEffect === 'writes-device')
      ) {
        result = { output: before.output, port: before.port };
      } else if (node.disabled) {
        result = { output: input ?? null, port: type.outputs[0] ?? 'out' };
      } else {
        const ran = await this.runNode(execution, node, input, outputs, detail, before?.id);
        if (ran.error) {
          const onError = node.settings?.onError ?? settings.defaults.onError ?? 'stop';
          if (onError === 'stop')
            return {
              status: 'failed',
              reason: 'node_error',
              error: { nodeId: node.id, nodeName: node.name, ...ran.error },
            };
          hadErrors = true;
          result =
            onError === 'errorPort'
              ? { output: { error: ran.error, input: input ?? null }, port: 'error' }
              : { output: input ?? null, port: type.outputs[0] ?? 'out' };
        } else result = ran.result!;
      }
      outputs[node.name] = { data: result.output };
      for (const edge of edges)
        if (edge.source === node.id && edge.sourcePort === result.port)
          activated.set(edge.target, result.output);
    }
    return { status: hadErrors ? 'completed_with_errors' : 'completed', error: null, reason: null };
  }

  /** Runs one node with its retry settings; stores its run per the history detail. */
  private async runNode(
    execution: ExecutionRow,
    node: PipelineNode,
    input: unknown,
    outputs: Record<string, { data: unknown }>,
    detail: 'minimal' | 'standard' | 'full',
    earlierRunId: string | undefined,
  ): Promise<{ result?: NodeResult; error?: { code: string; message: string } }> {
    const { repo, clock, sandbox } = this.options;
    const { settings } = execution.definition;
    const type = nodeType(node.type)!;
    const retry: RetrySettings = node.settings?.retry ??
      settings.defaults.retry ?? { maxTries: 1, waitMs: 0, backoff: 'fixed' };
    const timeoutSeconds =
      node.settings?.timeoutSeconds ?? settings.defaults.timeoutSeconds ?? DEFAULT_NODE_TIMEOUT_SECONDS;
    const startedAt = clock.now();
    const run: NodeRunRow = {
      id: earlierRunId ?? randomUUID(),
      executionId: execution.id,
      nodeId: node.id,
      nodeName: node.name,
      type: node.type,
      runIndex: 0,
      status: 'running',
      port: null,
      attempts: [],
      input: detail === 'full' ? (input ?? null) : null,
      output: null,
      error: null,
      startedAt,
      finishedAt: null,
      durationMs: null,
    };
    // A node that writes to a device is marked running before it starts: a crash then is never re-run.
    if (detail !== 'minimal' || type.sideEffect === 'writes-device') await repo.saveNodeRun(run);
    const context: NodeContext = {
      organizationId: execution.organizationId,
      parameters: node.parameters,
      input,
      trigger: execution.input,
      nodes: outputs,
      sandbox,
      timeoutMs: timeoutSeconds * 1000,
      attempt: 1,
      publish: (topic, value, quality) =>
        this.options.publish(execution.organizationId, topic, value, quality),
    };
    let lastError: { code: string; message: string } | undefined;
    for (let n = 1; n <= retry.maxTries; n++) {
      const attemptStart = clock.now();
      context.attempt = n;
      try {
        const result = await type.run(context);
        run.attempts.push({
          n,
          startedAt: attemptStart,
          durationMs: clock.now() - attemptStart,
          error: null,
        });
        Object.assign(run, {
          status: 'succeeded',
          port: result.port,
          output: detail === 'full' || type.sideEffect === 'writes-device' ? result.output : null,
          finishedAt: clock.now(),
          durationMs: clock.now() - startedAt,
        });
        if (detail !== 'minimal' || type.sideEffect === 'writes-device') await repo.saveNodeRun(run);
        return { result };
      } catch (error) {
        lastError = describe(error);
        run.attempts.push({
          n,
          startedAt: attemptStart,
          durationMs: clock.now() - attemptStart,
          error: lastError.message,
        });
        if (n < retry.maxTries)
          await sleep(retry.backoff === 'exponential' ? retry.waitMs * 2 ** (n - 1) : retry.waitMs);
      }
    }
    // A failed run always keeps its input, so that it can be inspected and retried.
    Object.assign(run, {
      status: 'failed',
      input: input ?? null,
      error: lastError!,
      finishedAt: clock.now(),
      durationMs: clock.now() - startedAt,
    });
    await repo.saveNodeRun(run);
    return { error: lastError! };
  }
}

/** The nodes in an order where every node comes after its upstream nodes (the graph was validated acyclic). */
export function topologicalOrder(
  nodes: PipelineNode[],
  edges: { source: string; target: string }[],
): PipelineNode[] {
  const indegree = new Map(nodes.map((n) => [n.id, 0]));
  for (const e of edges)
    if (indegree.has(e.target) && indegree.has(e.source)) indegree.set(e.target, indegree.get(e.target)! + 1);
  const byId = new Map(nodes.map((n) => [n.id, n]));
  const ready = nodes.filter((n) => indegree.get(n.id) === 0).map((n) => n.id);
  const order: PipelineNode[] = [];
  while (ready.length > 0) {
    const id = ready.shift()!;
    order.push(byId.get(id)!);
    for (const e of edges)
      if (e.source === id && indegree.has(e.target)) {
        indegree.set(e.target, indegree.get(e.target)! - 1);
        if (indegree.get(e.target) === 0) ready.push(e.target);
      }
  }
  return order;
}
