import type { Kysely } from 'kysely';
import type { Actor } from '../../../platform/actor.js';
import type { Clock } from '../../../platform/clock.js';
import type { EntityEvents } from '../../../platform/entity-events.js';
import { type ApiError, badRequest, checkBody, notFound, withDetails } from '../../../platform/errors.js';
import type { ListParams } from '../../../platform/list-query.js';
import type { Database } from '../../../storage/tables.js';
import type { ImpactCheck } from '../../graph/impact/guard-impact.js';
import type {
  ChangeType,
  EntityVersion,
  EntityVersionsRepository,
} from '../../versions/entity-versions.repository.js';
import { newRow, nextRow } from '../../versions/stamped-rows.js';
import { revertOf, type VersionedChange, type VersionHistory } from '../../versions/version-history.js';
import { VersionedLifecycle } from '../../versions/versioned-lifecycle.js';
import type { EdgeWriter } from '../../versions/versioned-rows.js';
import { nodeType } from '../nodes/node-types.js';
import type { ExecutionsRepository } from '../queue/executions.repository.js';
import { checkContent, type PipelineContent, type PipelineInput, snapshotOf } from './pipeline-content.js';
import { type GraphProblem, graphProblems, type PipelineNode } from './pipeline-definition.js';
import { ENTITY_TYPE, pipelineRows } from './pipeline-versions.js';
import type { PipelineRow, PipelinesRepository } from './pipelines.repository.js';

export { checkContent, type PipelineContent, type PipelineInput } from './pipeline-content.js';
export { ENTITY_TYPE };

/** 400 listing every graph problem, each with its node. */
function invalidGraph(problems: GraphProblem[]): ApiError {
  return withDetails(
    badRequest(
      `the pipeline cannot be enabled: ${problems.length} problem(s): ${problems
        .slice(0, 5)
        .map((p) => `${p.nodeId ?? 'pipeline'} ${p.path}: ${p.message}`)
        .join('; ')}`,
    ),
    { problems },
  );
}

/** The rules of pipelines: validation, versions (every change recorded in its transaction), enable and manual runs. */
export class PipelinesService {
  private readonly lifecycle: VersionedLifecycle<PipelineRow, PipelineContent>;
  private readonly history: VersionHistory;

  constructor(
    private readonly deps: {
      db: Kysely<Database>;
      repo: PipelinesRepository;
      versions: EntityVersionsRepository;
      /** The dependency graph's edges, rewritten on every save. */
      edges: EdgeWriter;
      executions: ExecutionsRepository;
      clock: Clock;
      /** Called after an execution was queued (wakes the engine). */
      onQueued?: () => void;
      /**
       * Where every committed change is announced: the triggers apply it before the service answers,
       * other replicas as the invalidation bus tells them.
       */
      events?: EntityEvents;
      /** Why the organization's runs are recorded as skipped right now (maintenance), or null. */
      skipReason?: (organizationId: string) => Promise<string | null>;
    },
  ) {
    this.lifecycle = new VersionedLifecycle(pipelineRows(deps.repo), deps);
    this.history = this.lifecycle.history;
  }

  async get(organizationId: string, id: string): Promise<PipelineRow> {
    const pipeline = await this.deps.repo.get(organizationId, id);
    if (!pipeline) throw notFound('pipeline');
    return pipeline;
  }

  async exists(organizationId: string, id: string): Promise<boolean> {
    return (await this.deps.repo.get(organizationId, id)) !== undefined;
  }

  list(
    organizationId: string,
    params: ListParams & { enabled?: boolean | undefined; label?: string | undefined },
  ) {
    return this.deps.repo.list(organizationId, params);
  }

  /** The graph problems of a pipeline (empty: it can be enabled). */
  problems(pipeline: Pick<PipelineContent, 'nodes' | 'edges'>): GraphProblem[] {
    return graphProblems(pipeline.nodes, pipeline.edges);
  }

  private content(input: PipelineInput): PipelineContent {
    return checkBody(() => checkContent(input));
  }

  async create(
    organizationId: string,
    input: PipelineInput,
    actor: Actor,
    changeType: ChangeType = 'create',
  ) {
    const content = this.content(input);
    if (content.enabled) {
      const problems = this.problems(content);
      if (problems.length > 0) throw invalidGraph(problems);
    }
    const now = this.deps.clock.now();
    const pipeline: PipelineRow = newRow(organizationId, content, actor, now);
    await this.lifecycle.guardName(this.deps.db, pipeline, undefined, () =>
      this.deps.db
        .transaction()
        .execute((trx) =>
          this.lifecycle.create(trx, { organizationId, row: pipeline, actor, at: now, changeType }),
        ),
    );
    await this.announce(organizationId, pipeline.id);
    return pipeline;
  }

  /** Tells the triggers (here, before the answer, and on every other replica) that a pipeline changed. */
  private announce(organizationId: string, id: string): Promise<void> {
    return this.deps.events?.changed({ type: ENTITY_TYPE, organizationId, id }) ?? Promise.resolve();
  }

  /** A copy under "X (copy)" (or "X (copy n)"), disabled, version 1, node ids kept. */
  async clone(organizationId: string, id: string, input: { name?: unknown }, actor: Actor) {
    const source = await this.get(organizationId, id);
    let name = input.name;
    if (name === undefined) {
      name = `${source.name} (copy)`.slice(0, 100);
      for (let n = 2; await this.deps.repo.nameTaken(organizationId, name as string); n++)
        name = `${source.name.slice(0, 85)} (copy ${n})`;
    }
    return this.create(organizationId, { ...snapshotOf(source), name, enabled: false }, actor, 'clone');
  }

  /**
   * Replaces a pipeline's content. `version` names the version the caller edited: another one answers
   * 409 and changes nothing. An enabled pipeline (or one being enabled) must have a valid graph: 400
   * listing every problem. Content equal to the current version's is no change: answered as it is.
   */
  async update(
    organizationId: string,
    id: string,
    input: PipelineInput,
    actor: Actor,
    options: VersionedChange & {
      /** The audit log's action (default: `reverted` for a revert, else `updated`). */
      auditAction?: string;
    } = {},
  ): Promise<PipelineRow> {
    const content = this.content(input);
    const outcome = await this.deps.db.transaction().execute(async (trx) => {
      const current = await this.deps.repo.get(organizationId, id, trx);
      if (!current) throw notFound('pipeline');
      const changeType = options.changeType ?? 'update';
      this.history.checkBasedOn(current.version, changeType === 'revert' ? current.version : input.version);
      if (content.enabled) {
        const problems = this.problems(content);
        if (problems.length > 0) throw invalidGraph(problems);
      }
      const now = this.deps.clock.now();
      const next = nextRow(current, content, actor, now);
      const { auditAction: action, ...change } = options;
      const saved = await this.lifecycle.update(trx, {
        organizationId,
        current,
        next,
        change,
        ...(action ? { action } : {}),
        actor,
        at: now,
      });
      return { pipeline: saved ? next : current, saved };
    });
    if (outcome.saved) await this.announce(organizationId, id);
    return outcome.pipeline;
  }

  /** Enables or disables (a new version); enabling needs a valid graph. Disabling cancels queued executions. */
  async setEnabled(organizationId: string, id: string, enabled: boolean, actor: Actor): Promise<PipelineRow> {
    const current = await this.get(organizationId, id);
    if (current.enabled === enabled) {
      if (enabled && this.problems(current).length > 0) throw invalidGraph(this.problems(current));
      return current;
    }
    const saved = await this.update(
      organizationId,
      id,
      { ...snapshotOf(current), enabled, version: current.version },
      actor,
      { auditAction: enabled ? 'enabled' : 'disabled' },
    );
    if (!enabled) await this.deps.executions.cancelQueued(organizationId, id, this.deps.clock.now());
    return saved;
  }

  /** Restores an old version's content as a new version (history is never rewritten). */
  revert(organizationId: string, id: string, version: EntityVersion, actor: Actor) {
    return this.update(organizationId, id, version.snapshot as PipelineInput, actor, revertOf(version));
  }

  /**
   * Deletes a pipeline with its history; its executions stay until retention. `check` runs first in
   * the transaction (the dependency graph's refusal while others depend on it).
   */
  async delete(
    organizationId: string,
    id: string,
    actor: Actor = { userId: null },
    check?: ImpactCheck,
  ): Promise<void> {
    await this.deps.db.transaction().execute(async (trx) => {
      await check?.(trx);
      const current = await this.deps.repo.get(organizationId, id, trx);
      if (!current) throw notFound('pipeline');
      await this.lifecycle.delete(trx, { organizationId, row: current, actor, at: this.deps.clock.now() });
    });
    await this.announce(organizationId, id);
    await this.deps.executions.cancelQueued(organizationId, id, this.deps.clock.now());
  }

  /**
   * Queues a manual run of the pipeline's current version from its manual trigger (the first one, or
   * `nodeId`). Needs a valid graph; a disabled pipeline can be run by hand. While the organization is in
   * maintenance the run is recorded as skipped with the reason, unless `force` (an Owner's or Admin's,
   * which the route checks). A `debug` run keeps every node's input and output, whatever the pipeline's
   * history detail (execution-rows.ts reads it from the trigger's source).
   */
  async execute(
    organizationId: string,
    id: string,
    input: unknown,
    nodeId: string | undefined,
    actor: Actor,
    force = false,
    debug = false,
  ) {
    const pipeline = await this.get(organizationId, id);
    const problems = this.problems(pipeline);
    if (problems.length > 0) throw invalidGraph(problems);
    const triggers = pipeline.nodes.filter((n) => n.type === 'trigger.manual' && !n.disabled);
    const trigger = nodeId === undefined ? triggers[0] : triggers.find((n) => n.id === nodeId);
    if (!trigger)
      throw withDetails(
        badRequest(
          nodeId === undefined
            ? '/nodeId: the pipeline has no manual trigger node'
            : `/nodeId: names no manual trigger node of this pipeline`,
        ),
        { path: '/nodeId' },
      );
    const skipped = force ? null : await this.deps.skipReason?.(organizationId);
    const now = this.deps.clock.now();
    const execution = await this.deps.executions.enqueue({
      organizationId,
      pipeline,
      trigger: {
        type: 'manual',
        nodeId: trigger.id,
        firedAt: now,
        source: {
          userId: actor.userId,
          ...(force ? { force: true } : {}),
          ...(debug ? { debug: true } : {}),
        },
      },
      input,
      now,
      ...(skipped ? { skippedBecause: skipped } : {}),
    });
    if (!skipped) this.deps.onQueued?.();
    return execution;
  }

  /** The trigger node types (a node type whose category is trigger). */
  static isTrigger(node: PipelineNode): boolean {
    return nodeType(node.type)?.category === 'trigger';
  }
}
