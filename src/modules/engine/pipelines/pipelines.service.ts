import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Actor } from '../../../platform/actor.js';
import type { Clock } from '../../../platform/clock.js';
import { type ApiError, badRequest, conflict, notFound, withDetails } from '../../../platform/errors.js';
import type { ListParams } from '../../../platform/list-query.js';
import type { Database } from '../../../storage/tables.js';
import type { ImpactCheck } from '../../graph/impact/guard-impact.js';
import type {
  ChangeType,
  EntityVersion,
  EntityVersionsRepository,
} from '../../versions/entity-versions.repository.js';
import { revertOf, type VersionedChange, VersionHistory } from '../../versions/version-history.js';
import type { ExecutionsRepository } from '../executions/executions.repository.js';
import { nodeType } from '../nodes/node-types.js';
import { auditPipeline } from './pipeline-audit.js';
import {
  checkEdges,
  checkNodes,
  checkSettings,
  type GraphProblem,
  graphProblems,
  type PipelineEdge,
  PipelineInputError,
  type PipelineNode,
  type PipelineSettings,
} from './pipeline-definition.js';
import type { PipelineRow, PipelinesRepository } from './pipelines.repository.js';

export const ENTITY_TYPE = 'pipeline';

/** What a pipeline's content is: what a version snapshot holds and what a revert restores. */
export interface PipelineContent {
  name: string;
  description: string | null;
  labels: Record<string, string>;
  enabled: boolean;
  settings: PipelineSettings;
  nodes: PipelineNode[];
  edges: PipelineEdge[];
}

export type PipelineInput = Partial<Record<keyof PipelineContent | 'version', unknown>>;

const asBadRequest = (error: unknown) =>
  error instanceof PipelineInputError ? withDetails(badRequest(error.message), { path: error.path }) : error;

const snapshotOf = (p: PipelineContent): PipelineContent => ({
  name: p.name,
  description: p.description,
  labels: p.labels,
  enabled: p.enabled,
  settings: p.settings,
  nodes: p.nodes,
  edges: p.edges,
});

function checkName(input: unknown): string {
  if (typeof input !== 'string' || [...input].length < 3 || [...input].length > 100)
    throw new PipelineInputError('/name', 'is required: a string of 3 to 100 characters');
  if (input.trim() !== input) throw new PipelineInputError('/name', 'must not start or end with white space');
  if ([...input].some((c) => c.codePointAt(0)! < 0x20 || c.codePointAt(0) === 0x7f))
    throw new PipelineInputError('/name', 'must not contain control characters');
  return input;
}

function checkDescription(input: unknown): string | null {
  if (input === undefined || input === null) return null;
  if (typeof input !== 'string' || [...input].length > 500 || input.includes('\u0000'))
    throw new PipelineInputError('/description', 'must be a string of at most 500 characters, or null');
  return input;
}

function checkLabels(input: unknown): Record<string, string> {
  if (input === undefined) return {};
  if (typeof input !== 'object' || input === null || Array.isArray(input))
    throw new PipelineInputError('/labels', 'must be an object of string values');
  const entries = Object.entries(input);
  if (entries.length > 20) throw new PipelineInputError('/labels', 'must have at most 20 labels');
  for (const [key, value] of entries) {
    if (!/^[A-Za-z0-9_.-]{1,63}$/.test(key))
      throw new PipelineInputError(
        `/labels/${key.slice(0, 60)}`,
        'keys are 1 to 63 characters of A-Z, a-z, 0-9, _ . -',
      );
    if (typeof value !== 'string' || [...value].length > 100 || value.includes('"') || value.includes('\\'))
      throw new PipelineInputError(
        `/labels/${key}`,
        'must be a string of at most 100 characters without " or \\',
      );
  }
  return input as Record<string, string>;
}

function checkEnabled(input: unknown): boolean {
  if (input === undefined) return false;
  if (typeof input !== 'boolean') throw new PipelineInputError('/enabled', 'must be a boolean');
  return input;
}

/** Checks every member of a pipeline body; the graph itself may be invalid (checked on enable). */
export function checkContent(input: PipelineInput): PipelineContent {
  return {
    name: checkName(input.name),
    description: checkDescription(input.description),
    labels: checkLabels(input.labels),
    enabled: checkEnabled(input.enabled),
    settings: checkSettings(input.settings),
    nodes: checkNodes(input.nodes),
    edges: checkEdges(input.edges),
  };
}

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
  private readonly history: VersionHistory;

  constructor(
    private readonly deps: {
      db: Kysely<Database>;
      repo: PipelinesRepository;
      versions: EntityVersionsRepository;
      executions: ExecutionsRepository;
      clock: Clock;
      /** Called after an execution was queued (wakes the engine). */
      onQueued?: () => void;
    },
  ) {
    this.history = new VersionHistory(deps.versions, ENTITY_TYPE, 'pipeline');
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
    try {
      return checkContent(input);
    } catch (error) {
      throw asBadRequest(error);
    }
  }

  private async ensureNameFree(
    trx: Kysely<Database>,
    organizationId: string,
    name: string,
    exceptId?: string,
  ) {
    if (await this.deps.repo.nameTaken(organizationId, name, exceptId, trx))
      throw conflict(
        `a pipeline named ${JSON.stringify(name)} exists in this organization (names ignore case)`,
      );
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
    const pipeline: PipelineRow = {
      id: randomUUID(),
      organizationId,
      ...content,
      version: 1,
      createdAt: now,
      createdBy: actor.userId,
      updatedAt: now,
      updatedBy: actor.userId,
    };
    await this.deps.db.transaction().execute(async (trx) => {
      await this.ensureNameFree(trx, organizationId, pipeline.name);
      await this.deps.repo.insert(trx, pipeline);
      await this.history.record(trx, {
        organizationId,
        entityId: pipeline.id,
        version: 1,
        change: { changeType },
        snapshot: snapshotOf(pipeline),
        actor,
        at: now,
      });
      const action = changeType === 'clone' ? 'cloned' : 'created';
      await auditPipeline(trx, now, {
        organizationId,
        actor,
        action,
        id: pipeline.id,
        before: null,
        after: pipeline,
      });
    });
    return pipeline;
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
    return this.deps.db.transaction().execute(async (trx) => {
      const current = await this.deps.repo.get(organizationId, id, trx);
      if (!current) throw notFound('pipeline');
      const changeType = VersionHistory.changeTypeOf(options);
      this.history.checkBasedOn(current.version, changeType === 'revert' ? current.version : input.version);
      if (content.enabled) {
        const problems = this.problems(content);
        if (problems.length > 0) throw invalidGraph(problems);
      }
      if (VersionHistory.unchanged(snapshotOf(current), snapshotOf(content))) return current;
      const now = this.deps.clock.now();
      const next: PipelineRow = {
        ...current,
        ...content,
        version: current.version + 1,
        updatedAt: now,
        updatedBy: actor.userId,
      };
      await this.ensureNameFree(trx, organizationId, next.name, id);
      if (!(await this.deps.repo.update(trx, next, current.version))) this.history.changedMeanwhile();
      await this.history.record(trx, {
        organizationId,
        entityId: id,
        version: next.version,
        change: options,
        snapshot: snapshotOf(next),
        actor,
        at: now,
      });
      const action = options.auditAction ?? (changeType === 'revert' ? 'reverted' : 'updated');
      await auditPipeline(trx, now, { organizationId, actor, action, id, before: current, after: next });
      return next;
    });
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
      await this.history.deleteAll(trx, organizationId, id);
      await this.deps.repo.delete(trx, organizationId, id);
      await auditPipeline(trx, this.deps.clock.now(), {
        organizationId,
        actor,
        action: 'deleted',
        id,
        before: current,
        after: null,
      });
    });
    await this.deps.executions.cancelQueued(organizationId, id, this.deps.clock.now());
  }

  /**
   * Queues a manual run of the pipeline's current version from its manual trigger (the first one, or
   * `nodeId`). Needs a valid graph; a disabled pipeline can be run by hand.
   */
  async execute(
    organizationId: string,
    id: string,
    input: unknown,
    nodeId: string | undefined,
    actor: Actor,
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
    const now = this.deps.clock.now();
    const execution = await this.deps.executions.enqueue({
      organizationId,
      pipeline,
      trigger: { type: 'manual', nodeId: trigger.id, firedAt: now, source: { userId: actor.userId } },
      input,
      now,
    });
    this.deps.onQueued?.();
    return execution;
  }

  /** The trigger node types (a node type whose category is trigger). */
  static isTrigger(node: PipelineNode): boolean {
    return nodeType(node.type)?.category === 'trigger';
  }
}
