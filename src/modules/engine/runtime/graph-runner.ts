import { nodeType, outputsOf } from '../nodes/node-types.js';
import { directNodes } from '../pipelines/loop-bodies.js';
import type { PipelineEdge, PipelineNode } from '../pipelines/pipeline-definition.js';
import type { Checkpoint, ExecutionRow, MemoEntry, NodeRunRow } from '../queue/executions.repository.js';
import { planOf } from './graph-plan.js';
import { type NodeRunDeps, runIdOf, runNode, saveRun, sideEffectOf, type TryLimit } from './node-runner.js';

/** How a claim of an execution ended. */
export type Outcome =
  | {
      kind: 'finished';
      status: ExecutionRow['status'];
      error: ExecutionRow['error'];
      reason: string | null;
    }
  | { kind: 'parked'; until: number; checkpoint: Checkpoint }
  | { kind: 'lost' };

/** Ends the whole run from any depth of loops. */
class Halt {
  constructor(readonly outcome: Outcome) {}
}

interface Arrival {
  source: string;
  port: string;
  data: unknown;
}

interface Iteration {
  index: number | null;
  /** Indices of the enclosing loops, outermost first (`2.0`); null outside loops. */
  key: string | null;
}

export interface GraphRunDeps extends NodeRunDeps {
  /** A wait up to this long sleeps in place; a longer one parks the execution in the database. */
  inlineWaitMs: number;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The ids of a scope's nodes, by scope: the top level's is the plan's, shared by its executions. */
const scopeIds = new WeakMap<PipelineNode[], Set<string>>();
function idsOf(scope: PipelineNode[]): Set<string> {
  let ids = scopeIds.get(scope);
  if (!ids) {
    ids = new Set(scope.map((n) => n.id));
    scopeIds.set(scope, ids);
  }
  return ids;
}

/** The ports a stored run left by (several are stored comma-separated). */
const portsOf = (run: NodeRunRow) => (run.port ?? '').split(',').filter(Boolean);

/**
 * One claim's run of an execution's graph, in topological order. Each node runs once per activation
 * scope: the top level once, a for-each's body once per element (its runs carry the iteration).
 * Every result is kept in a memo by node and iteration; a parked execution stores the memo, and a
 * resumed one replays the graph taking results from it instead of running nodes again, so that loops,
 * merges and switches reach the same state they had.
 */
export class GraphRun {
  private readonly edges: PipelineEdge[];
  private readonly order: PipelineNode[];
  private readonly bodies: Map<string, Set<string>>;
  /** The nodes of the top level (outside loop bodies), in order. */
  private readonly top: PipelineNode[];
  private readonly memo = new Map<string, MemoEntry>();
  private readonly outputs: Record<string, { data: unknown }> = {};
  private readonly runCounts = new Map<string, number>();
  /** Runs stored by earlier claims, by node and iteration (none for an execution claimed from the queue). */
  private earlier: Map<string, NodeRunRow> | undefined;
  /** Stored runs that are updated later: earlier ones, and this claim's for-each runs (made when needed). */
  private runsById: Map<string, NodeRunRow> | undefined;
  private waiting: Checkpoint['waiting'];
  /** Node runs started by this claim (their `seq`). */
  private started = 0;
  private hadErrors: boolean;
  private readonly resumedAt: number;
  private readonly elapsedBefore: number;
  private readonly deadline: number;

  constructor(
    private readonly deps: GraphRunDeps,
    private readonly execution: ExecutionRow,
    /** True once this claim's lease is lost: the run stops at its next node. */
    private readonly leaseLost: () => boolean,
    /** The time limit of this claim's node try in flight (holdTryLimit), released by the caller. */
    private readonly limit: TryLimit,
  ) {
    const { edges, settings } = execution.definition;
    this.edges = edges;
    ({ order: this.order, bodies: this.bodies, top: this.top } = planOf(execution.definition));
    const now = deps.clock.now();
    const checkpoint = execution.checkpoint;
    this.resumedAt = now;
    this.elapsedBefore = checkpoint ? checkpoint.elapsedMs : now - (execution.startedAt ?? now);
    this.deadline = now + settings.timeoutSeconds * 1000 - this.elapsedBefore;
    this.waiting = checkpoint?.waiting ?? null;
    this.hadErrors = checkpoint?.hadErrors ?? false;
    for (const [key, entry] of Object.entries(checkpoint?.memo ?? {})) this.memo.set(key, entry);
  }

  async run(): Promise<Outcome> {
    const { repo } = this.deps;
    const { execution } = this;
    const detail = execution.definition.settings.historyDetail;
    // Runs stored by an earlier claim (a replica died, or the execution was parked by a wait); one
    // claimed from the queue has none, and saves the query.
    const earlierRuns = execution.fromQueue ? [] : await repo.nodeRuns(execution.id);
    for (const run of earlierRuns) {
      if (run.status === 'running' && sideEffectOf(run) === 'writes-device')
        return {
          kind: 'finished',
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
      const key = run.iterationKey === null ? run.nodeId : `${run.nodeId}@${run.iterationKey}`;
      this.earlier ??= new Map();
      this.earlier.set(key, run);
      this.keepRun(run);
      // A node that finished before a crash is not run again when its output was kept (history detail
      // full, or a device write, whose output is always kept); otherwise it runs again.
      const kept = detail === 'full' || sideEffectOf(run) === 'writes-device';
      if (run.status !== 'succeeded' || !kept || this.memo.has(key) || portsOf(run).length === 0) continue;
      const ports = portsOf(run);
      this.memo.set(
        key,
        ports[0] === 'item' && run.type === 'flow.for-each'
          ? { output: run.output, ports, iterate: run.output as unknown[], runId: run.id }
          : { output: run.output, ports },
      );
    }
    // A retry from the failed node starts there; `$node` sees the outputs the original kept.
    if (
      execution.retryOf !== null &&
      execution.trigger.type === 'retry' &&
      execution.trigger.source.mode !== 'from-start'
    )
      for (const run of await repo.nodeRuns(execution.retryOf))
        if (run.status === 'succeeded' && run.output !== null)
          this.outputs[run.nodeName] = { data: run.output };
    const seeds = new Map<string, Arrival[]>([
      [execution.trigger.nodeId, [{ source: 'trigger', port: 'out', data: execution.input }]],
    ]);
    try {
      await this.runScope(this.top, seeds, { index: null, key: null });
    } catch (error) {
      if (error instanceof Halt) return error.outcome;
      throw error;
    }
    return {
      kind: 'finished',
      status: this.hadErrors ? 'completed_with_errors' : 'completed',
      error: null,
      reason: null,
    };
  }

  /** Runs the nodes of one scope (in order) that inputs arrived at; answers the last output. */
  private async runScope(
    scope: PipelineNode[],
    arrivals: Map<string, Arrival[]>,
    iteration: Iteration,
  ): Promise<unknown> {
    const { clock } = this.deps;
    const { leaseLost } = this;
    const inScope = idsOf(scope);
    let last: unknown;
    for (const node of scope) {
      if (leaseLost()) throw new Halt({ kind: 'lost' });
      const got = arrivals.get(node.id);
      if (!got) continue;
      if (clock.now() > this.deadline) throw this.failure(node, 'timeout', this.timeLimitMessage());
      const type = nodeType(node.type)!;
      let data = got[got.length - 1]!.data;
      let inputs: Arrival[] | undefined;
      const isStart = node.id === this.execution.trigger.nodeId && iteration.key === null;
      if (type.join && !isStart) {
        const connected = this.edges.filter((e) => e.target === node.id).length;
        // `all`: a branch that was not taken never arrives, and then the merge does not run.
        if (type.join(node.parameters) === 'all' && got.length < connected) continue;
        data = got[0]!.data;
        inputs = got;
      }
      const key = iteration.key === null ? node.id : `${node.id}@${iteration.key}`;
      const runIndex = this.runCounts.get(node.id) ?? 0;
      this.runCounts.set(node.id, runIndex + 1);
      let result = this.memo.get(key);
      if (!result) {
        if (node.disabled)
          result = { output: data ?? null, ports: [outputsOf(type, node.parameters)[0] ?? 'out'] };
        else if (this.waiting?.key === key) result = await this.resumeWait(data);
        else result = await this.runOne(node, key, data, inputs, { runIndex, ...iteration });
        this.memo.set(key, result);
      }
      this.outputs[node.name] = { data: result.output };
      if (result.iterate) result = await this.runLoop(node, result, iteration);
      for (const port of result.ports)
        for (const e of this.edges)
          if (e.source === node.id && e.sourcePort === port && inScope.has(e.target)) {
            const list = arrivals.get(e.target) ?? [];
            list.push({ source: node.name, port, data: result.output });
            arrivals.set(e.target, list);
          }
      last = result.output;
    }
    return last;
  }

  /** Runs a node (no earlier result): its error handling, and a wait's parking. */
  private async runOne(
    node: PipelineNode,
    key: string,
    data: unknown,
    inputs: Arrival[] | undefined,
    place: { runIndex: number; index: number | null; key: string | null },
  ): Promise<MemoEntry> {
    const type = nodeType(node.type)!;
    const ran = await runNode(
      this.deps,
      this.execution,
      node,
      inputs ? { data, inputs } : { data },
      this.outputs,
      {
        runIndex: place.runIndex,
        iteration: place.index,
        iterationKey: place.key,
        runId: this.earlier?.get(key)?.id,
        seq: this.started++,
      },
      this.limit,
    );
    if (ran.error) {
      const onError = node.settings?.onError ?? this.execution.definition.settings.defaults.onError ?? 'stop';
      if (onError === 'stop')
        throw new Halt({
          kind: 'finished',
          status: 'failed',
          reason: 'node_error',
          error: { nodeId: node.id, nodeName: node.name, ...ran.error },
        });
      this.hadErrors = true;
      return onError === 'errorPort'
        ? { output: { error: ran.error, input: data ?? null }, ports: ['error'] }
        : { output: data ?? null, ports: [outputsOf(type, node.parameters)[0] ?? 'out'] };
    }
    const result = ran.result!;
    if (result.waitUntil !== undefined) await this.wait(key, ran.run, result.waitUntil);
    const entry: MemoEntry = { output: result.output, ports: result.ports ?? [result.port] };
    if (result.iterate) {
      Object.assign(entry, { iterate: result.iterate, runId: runIdOf(ran.run) });
      this.keepRun(ran.run);
    }
    return entry;
  }

  /** Runs a for-each's body once per element; answers the result leaving by `done`. */
  private async runLoop(node: PipelineNode, entry: MemoEntry, outer: Iteration): Promise<MemoEntry> {
    const items = entry.iterate!;
    const body = this.bodies.get(node.id) ?? new Set<string>();
    const scope = directNodes(
      this.order.filter((n) => body.has(n.id)),
      this.bodies,
    );
    const results: unknown[] = [];
    for (const [index, item] of items.entries()) {
      const key = outer.key === null ? String(index) : `${outer.key}.${index}`;
      this.outputs[node.name] = { data: { item, index, count: items.length } };
      const arrivals = new Map<string, Arrival[]>();
      for (const e of this.edges)
        if (e.source === node.id && e.sourcePort === 'item')
          arrivals.set(e.target, [
            ...(arrivals.get(e.target) ?? []),
            { source: node.name, port: 'item', data: item },
          ]);
      const last = await this.runScope(scope, arrivals, { index, key });
      results.push(last === undefined ? item : last);
    }
    this.outputs[node.name] = { data: results };
    const detail = this.execution.definition.settings.historyDetail;
    const stored = entry.runId === undefined ? undefined : this.runsById?.get(entry.runId);
    if (stored && detail !== 'minimal')
      await saveRun(this.deps, {
        ...stored,
        port: 'done',
        output: detail === 'full' ? results : null,
        finishedAt: this.deps.clock.now(),
        durationMs: this.deps.clock.now() - stored.startedAt,
      });
    return { output: results, ports: ['done'] };
  }

  /** A wait: sleeps in place when short, else parks the execution until `until`. */
  private async wait(key: string, run: NodeRunRow, until: number): Promise<void> {
    const remaining = until - this.deps.clock.now();
    if (remaining > this.deps.inlineWaitMs) {
      this.waiting = { key, until, runId: runIdOf(run) };
      throw this.park(until);
    }
    await sleep(Math.max(0, remaining));
    if (this.execution.definition.settings.historyDetail === 'minimal') return;
    const now = this.deps.clock.now();
    await saveRun(this.deps, {
      ...run,
      status: 'succeeded',
      finishedAt: now,
      durationMs: now - run.startedAt,
    });
  }

  /** A resumed execution reaches the wait it was parked in. */
  private async resumeWait(data: unknown): Promise<MemoEntry> {
    const waiting = this.waiting!;
    const remaining = waiting.until - this.deps.clock.now();
    if (remaining > this.deps.inlineWaitMs) throw this.park(waiting.until);
    await sleep(Math.max(0, remaining));
    this.waiting = null;
    const stored = this.runsById?.get(waiting.runId);
    const now = this.deps.clock.now();
    if (stored)
      await saveRun(this.deps, {
        ...stored,
        status: 'succeeded',
        port: 'out',
        output: this.execution.definition.settings.historyDetail === 'full' ? (data ?? null) : null,
        finishedAt: now,
        durationMs: now - stored.startedAt,
      });
    return { output: data ?? null, ports: ['out'] };
  }

  /** Keeps a stored run that is updated later (runsById). */
  private keepRun(run: NodeRunRow): void {
    this.runsById ??= new Map();
    this.runsById.set(run.id, run);
  }

  private park(until: number): Halt {
    const memo: Record<string, MemoEntry> = {};
    for (const [key, entry] of this.memo) memo[key] = entry;
    return new Halt({
      kind: 'parked',
      until,
      checkpoint: {
        memo,
        elapsedMs: this.elapsedBefore + (this.deps.clock.now() - this.resumedAt),
        waiting: this.waiting,
        hadErrors: this.hadErrors,
      },
    });
  }

  private timeLimitMessage(): string {
    return `the execution exceeded its time limit of ${this.execution.definition.settings.timeoutSeconds} s`;
  }

  private failure(node: PipelineNode, reason: string, message: string): Halt {
    return new Halt({
      kind: 'finished',
      status: 'failed',
      reason,
      error: { nodeId: node.id, nodeName: node.name, code: reason, message },
    });
  }
}
