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
 * The time limit of the node try in flight in one execution: its nodes run one at a time, so a try sets
 * the fields of its execution's limit (holdTryLimit, once an execution) and clears them when it ends. One
 * timer checks the limits every SWEEP_MS while any is held. It used to be an entry in a set, with its
 * closures, for every try: in the pipeline bench (2026-11-30) about 9 µs of the event loop's 77 a message,
 * most of it in the collector, and a fifth of the rate, for tries that mostly end in microseconds.
 */
export interface TryLimit {
  /** When the try in flight times out (epoch ms), and its time limit as the error names it. */
  at: number;
  ms: number;
  /** Ends the try in flight with the error; undefined while none is. */
  expire: ((error: NodeError) => void) | undefined;
}

const SWEEP_MS = 50;
const limits = new Set<TryLimit>();
let sweeper: NodeJS.Timeout | undefined;

/** A time limit for the tries of one execution's nodes, checked until releaseTryLimit. */
export function holdTryLimit(): TryLimit {
  const limit: TryLimit = { at: 0, ms: 0, expire: undefined };
  limits.add(limit);
  sweeper ??= setInterval(sweep, SWEEP_MS);
  return limit;
}

export function releaseTryLimit(limit: TryLimit): void {
  limit.expire = undefined;
  limits.delete(limit);
  if (limits.size === 0 && sweeper) {
    clearInterval(sweeper);
    sweeper = undefined;
  }
}

function sweep(): void {
  const now = Date.now();
  for (const limit of limits) {
    const expire = limit.expire;
    if (expire !== undefined && limit.at <= now) {
      limit.expire = undefined;
      expire(new NodeError('timeout', `the node exceeded its time limit of ${limit.ms} ms`));
    }
  }
}

/** One try of `type.run`, ended with a timeout error after `timeoutMs` whatever the node does. */
function attempt(
  type: NodeType,
  context: NodeContext,
  timeoutMs: number,
  limit: TryLimit,
): Promise<NodeResult> {
  // The sandbox ends runaway code itself at the same limit; this also bounds nodes that wait on I/O.
  // A settled promise ignores the later call: a try that ends as it times out ends once.
  return new Promise((resolve, reject) => {
    limit.at = Date.now() + timeoutMs + 250;
    limit.ms = timeoutMs;
    limit.expire = reject;
    try {
      type.run(context).then(resolve, reject);
    } catch (error) {
      reject(error);
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
  limit: TryLimit,
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
      let result: NodeResult;
      try {
        result = await attempt(type, context, timeoutSeconds * 1000, limit);
      } finally {
        limit.expire = undefined;
      }
      // A run of history detail minimal is stored only when it failed or wrote to a device: its tries
      // are recorded only then.
      if (detail !== 'minimal' || writesDevice(run))
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
