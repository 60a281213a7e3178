import type { Clock } from '../../../platform/clock.js';
import { timeOrderedId } from '../../../platform/time/time-ordered-id.js';
import type { NodeServices } from '../nodes/node-services.js';
import {
  type NodeContext,
  NodeError,
  type NodeResult,
  type NodeRunInfo,
  type NodeType,
  nodeType,
} from '../nodes/node-types.js';
import type { PipelineNode, PipelineSettings, RetrySettings } from '../pipelines/pipeline-definition.js';
import type {
  Attempt,
  ExecutionRow,
  ExecutionsRepository,
  NodeRunRow,
} from '../queue/executions.repository.js';
import { type Sandbox, SandboxError } from '../sandbox/sandbox.js';

export const DEFAULT_NODE_TIMEOUT_SECONDS = 10;

/** A node with no retry settings (and no pipeline default) is tried once. */
const NO_RETRY: RetrySettings = Object.freeze({ maxTries: 1, waitMs: 0, backoff: 'fixed' });

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A node failure as stored and shown: a code and a message, never a stack trace. */
export function describeError(error: unknown): { code: string; message: string } {
  if (error instanceof SandboxError || error instanceof NodeError)
    return { code: error.code, message: error.message };
  return { code: 'node_error', message: error instanceof Error ? error.message : String(error) };
}

/** A run marked as a device write: by its type, or by its parameters (a connection call), before it wrote. */
const writesDevice = (run: { sideEffect?: string | null | undefined }) => run.sideEffect === 'writes-device';

/**
 * What a node (or a stored run) can touch; the engine keeps device writes' runs always, and never re-runs
 * them by itself. A run records `writes-device` when its parameters made it write (a connection call).
 */
export const sideEffectOf = (node: { type: string; sideEffect?: string | null | undefined }) =>
  writesDevice(node) ? 'writes-device' : (nodeType(node.type)?.sideEffect ?? 'none');

export interface NodeRunPlace {
  /** Which run of this node in the execution (loops run a node many times). */
  runIndex: number;
  iteration: number | null;
  iterationKey: string | null;
  /** The stored run to update (a resumed wait), or none. */
  runId?: string | undefined;
  /** Its place among the runs of this claim. */
  seq?: number;
}

export interface NodeRunDeps {
  repo: ExecutionsRepository;
  clock: Clock;
  sandbox: Sandbox;
  publish: (organizationId: string, topic: string, value: unknown, quality?: number) => Promise<void>;
  /** Storage and modules for data and integration nodes (node-services.ts). */
  services?: NodeServices | undefined;
  /**
   * Stores a node run (default: at once, `repo.saveNodeRun`). The engine stores a device write's run at
   * once and the others with its next bookkeeping turn (they are never needed to avoid a re-run).
   */
  saveRun?: (run: NodeRunRow) => Promise<void>;
}

/**
 * A run's id, made when first needed: a run of history detail minimal is stored only when it fails or
 * writes to a device, so most never need one (a fifth of the event loop's id-making a message).
 */
export function runIdOf(run: NodeRunRow): string {
  if (run.id === '') run.id = timeOrderedId(run.startedAt);
  return run.id;
}

/** Stores `run` as `deps` says (saveRun, else at once). */
export function saveRun(deps: NodeRunDeps, run: NodeRunRow): Promise<void> {
  runIdOf(run);
  return deps.saveRun ? deps.saveRun(run) : deps.repo.saveNodeRun(run);
}

/**
 * The time limits of the node tries in flight, checked by one timer every SWEEP_MS while there are any,
 * instead of a timer each (a node ends in microseconds; a timer set and cleared for each cost more).
 */
const SWEEP_MS = 50;
const deadlines = new Set<{ at: number; expire(): void }>();
let sweeper: NodeJS.Timeout | undefined;

function sweep(): void {
  const now = Date.now();
  for (const deadline of deadlines)
    if (deadline.at <= now) {
      deadlines.delete(deadline);
      deadline.expire();
    }
  if (deadlines.size === 0) {
    clearInterval(sweeper);
    sweeper = undefined;
  }
}

/** One try of `type.run`, ended with a timeout error after `timeoutMs` whatever the node does. */
function attempt(type: NodeType, context: NodeContext, timeoutMs: number): Promise<NodeResult> {
  // The sandbox ends runaway code itself at the same limit; this also bounds nodes that wait on I/O.
  return new Promise((resolve, reject) => {
    const deadline = {
      at: Date.now() + timeoutMs + 250,
      expire: () => reject(new NodeError('timeout', `the node exceeded its time limit of ${timeoutMs} ms`)),
    };
    deadlines.add(deadline);
    sweeper ??= setInterval(sweep, SWEEP_MS);
    const fail = (error: unknown) => {
      deadlines.delete(deadline);
      reject(error);
    };
    try {
      type.run(context).then((result) => {
        deadlines.delete(deadline);
        resolve(result);
      }, fail);
    } catch (error) {
      fail(error);
    }
  });
}

/** Records a try; the first makes an array of one (a push onto the empty one reserved room for 16). */
function addAttempt(run: NodeRunRow, attempt: Attempt): void {
  if (run.attempts.length === 0) run.attempts = [attempt];
  else run.attempts.push(attempt);
}

/**
 * What a node's code sees while it runs in an execution: its methods on the prototype, where a closure
 * each (publish, now, beforeDeviceWrite) was made for every node run.
 */
class RunContext implements NodeContext {
  readonly organizationId: string;
  readonly parameters: Record<string, unknown>;
  readonly input: unknown;
  readonly trigger: unknown;
  readonly sandbox: Sandbox;
  readonly run: NodeRunInfo;
  readonly services: NodeServices | undefined;
  readonly inputs: NodeContext['inputs'];
  attempt = 1;

  constructor(
    private readonly deps: NodeRunDeps,
    execution: ExecutionRow,
    node: PipelineNode,
    /** The stored run, marked by beforeDeviceWrite. */
    private readonly nodeRun: NodeRunRow,
    input: { data: unknown; inputs?: NodeContext['inputs'] },
    readonly nodes: Record<string, { data: unknown }>,
    readonly timeoutMs: number,
  ) {
    this.organizationId = execution.organizationId;
    this.parameters = node.parameters;
    this.input = input.data;
    this.trigger = execution.input;
    this.sandbox = deps.sandbox;
    this.services = deps.services;
    this.inputs = input.inputs;
    this.run = {
      executionId: execution.id,
      pipelineId: execution.pipelineId,
      nodeId: node.id,
      iterationKey: nodeRun.iterationKey,
      trigger: execution.trigger,
    };
  }

  publish(topic: string, value: unknown, quality?: number): Promise<void> {
    return this.deps.publish(this.organizationId, topic, value, quality);
  }

  now(): number {
    return this.deps.clock.now();
  }

  async beforeDeviceWrite(): Promise<void> {
    this.nodeRun.sideEffect = 'writes-device';
    await saveRun(this.deps, this.nodeRun);
  }
}

/**
 * Runs one node with its settings (timeout per try, retry with tries, wait and backoff) and stores its
 * run per the history detail: `minimal` stores none, `standard` status and timing, `full` inputs and
 * outputs too. A failed run always keeps its input (for inspection and retry); a device write's run is
 * stored as running before it starts, so that a crash in it is never re-run by itself.
 */
export async function runNode(
  deps: NodeRunDeps,
  execution: ExecutionRow,
  node: PipelineNode,
  input: { data: unknown; inputs?: NodeContext['inputs'] },
  outputs: Record<string, { data: unknown }>,
  place: NodeRunPlace,
): Promise<{ result?: NodeResult; error?: { code: string; message: string }; run: NodeRunRow }> {
  const { clock } = deps;
  const settings: PipelineSettings = execution.definition.settings;
  const detail = settings.historyDetail;
  const type = nodeType(node.type)!;
  const retry: RetrySettings = node.settings?.retry ?? settings.defaults.retry ?? NO_RETRY;
  const timeoutSeconds =
    node.settings?.timeoutSeconds ?? settings.defaults.timeoutSeconds ?? DEFAULT_NODE_TIMEOUT_SECONDS;
  const startedAt = clock.now();
  const run: NodeRunRow = {
    // Time-ordered (runIdOf): new runs land on the last pages of the table's indexes, not all over them.
    id: place.runId ?? '',
    executionId: execution.id,
    nodeId: node.id,
    nodeName: node.name,
    type: node.type,
    runIndex: place.runIndex,
    status: 'running',
    port: null,
    attempts: [],
    input: detail === 'full' ? (input.data ?? null) : null,
    output: null,
    error: null,
    startedAt,
    finishedAt: null,
    durationMs: null,
    iteration: place.iteration,
    iterationKey: place.iterationKey,
    sideEffect: type.sideEffect === 'writes-device' ? 'writes-device' : null,
    seq: place.seq ?? 0,
  };
  if (writesDevice(run)) await saveRun(deps, run);
  const context = new RunContext(deps, execution, node, run, input, outputs, timeoutSeconds * 1000);
  let lastError: { code: string; message: string } | undefined;
  for (let n = 1; n <= retry.maxTries; n++) {
    const attemptStart = clock.now();
    context.attempt = n;
    try {
      const result = await attempt(type, context, timeoutSeconds * 1000);
      addAttempt(run, { n, startedAt: attemptStart, durationMs: clock.now() - attemptStart, error: null });
      // A wait is stored as waiting until the engine has waited (graph-runner), so a crash in it waits again.
      const waits = result.waitUntil !== undefined;
      const now = clock.now();
      run.status = waits ? 'waiting' : 'succeeded';
      run.port = result.ports ? result.ports.join(',') : result.port;
      run.output = detail === 'full' || writesDevice(run) ? result.output : null;
      run.finishedAt = waits ? null : now;
      run.durationMs = waits ? null : now - startedAt;
      if (detail !== 'minimal' || writesDevice(run)) await saveRun(deps, run);
      return { result, run };
    } catch (error) {
      lastError = describeError(error);
      addAttempt(run, {
        n,
        startedAt: attemptStart,
        durationMs: clock.now() - attemptStart,
        error: lastError.message,
      });
      // A failed device write may still have reached the device: it is never tried again by itself
      // (an explicit retry of the execution, with confirmWrites, is the way to write again).
      if (writesDevice(run) && n < retry.maxTries) {
        lastError = {
          ...lastError,
          message: `${lastError.message} (a device write is not retried by itself: it may have reached the device)`,
        };
        break;
      }
      if (n < retry.maxTries)
        await sleep(retry.backoff === 'exponential' ? retry.waitMs * 2 ** (n - 1) : retry.waitMs);
    }
  }
  Object.assign(run, {
    status: 'failed',
    input: input.data ?? null,
    error: lastError!,
    finishedAt: clock.now(),
    durationMs: clock.now() - startedAt,
  });
  await saveRun(deps, run);
  return { error: lastError!, run };
}
