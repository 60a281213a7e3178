import type { Kysely } from 'kysely';
import type { Clock } from '../../platform/clock.js';
import { badRequest, conflict, insufficientScope, notFound, withDetails } from '../../platform/errors.js';
import type { Database } from '../../storage/tables.js';
import { DependencyGraph, type NodeKey, nodeKey, splitKey } from './edges/dependency-graph.js';
import { type DependencyEdges, edgesOf } from './edges/edges.repository.js';
import { lockForChange } from './edges/entity-locks.js';
import { ENTITY_TYPES, type EntityType } from './edges/references.js';

export { ENTITY_TYPES } from './edges/references.js';

import { allEntities, lookupEntities } from './entity-directory.js';
import { NodePresenter, type NodeView } from './graph-views.js';
import {
  type AffectedEntry,
  assessImpact,
  type ImpactAction,
  isBlocking,
  type Severity,
} from './impact/impact.js';
import { loadUpdateFacts } from './impact/update-context.js';
import { classifyUpdate } from './impact/update-rules.js';
import type { EntityKinds } from './kinds/entity-kinds.js';

export const MAX_DEPTH = 5;

export interface EntityRef {
  type: EntityType;
  id: string;
}

export interface ImpactView {
  entity: NodeView;
  action: ImpactAction;
  affected: {
    entity: NodeView;
    severity: Severity;
    reason: string;
    path: (NodeView & { relation?: string; via?: string | null })[];
  }[];
  summary: Record<Severity, number>;
  /** Whether a delete or stop is refused (409) unless forced: something breaks or degrades. */
  blocking: boolean;
}

/** Parses `<type>:<id>` (the focus query parameter); 400 naming `field` otherwise. */
export function parseEntityRef(text: string, field: string): EntityRef {
  const at = text.indexOf(':');
  const type = text.slice(0, Math.max(at, 0)) as EntityType;
  const id = text.slice(at + 1);
  if (at <= 0 || !ENTITY_TYPES.includes(type) || id.length === 0)
    throw badRequest(`${field} must be <type>:<id> with type one of ${ENTITY_TYPES.join(', ')}`);
  return checkEntityRef({ type, id }, field);
}

/** Checks an id's shape for its type: a UUID, or a topic path or filter. */
export function checkEntityRef(ref: EntityRef, field: string): EntityRef {
  if (ref.type === 'topic') {
    if (ref.id.length > 1024 || ref.id.startsWith('/') || ref.id.endsWith('/') || ref.id.includes('//'))
      throw badRequest(`${field}: a topic must be a path or filter such as v1/plant/+/temp`);
    return ref;
  }
  if (!/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(ref.id))
    throw badRequest(`${field}: the id of a ${ref.type} is a UUID`);
  return { type: ref.type, id: ref.id.toLowerCase() };
}

/**
 * The dependency graph of an organization: focused views, dependents, dependencies, impact, unused
 * entities. What it knows of each entity type comes from its registered kind (`deps.kinds`).
 */
export class DependencyGraphService {
  /** The stored edges, rewritten by every entity module inside the transaction of each save. */
  readonly edges: DependencyEdges;

  constructor(
    private readonly deps: {
      db: Kysely<Database>;
      clock: Clock;
      kinds: EntityKinds;
      edges: DependencyEdges;
    },
  ) {
    this.edges = deps.edges;
  }

  /**
   * Locks the entity's row until the end of the transaction that deletes or stops it (PostgreSQL; see
   * edges/entity-locks.ts), so that a dependent saved meanwhile is either seen by the check or refused.
   */
  lockForChange(trx: Kysely<Database>, ref: EntityRef): Promise<void> {
    return lockForChange(trx, this.deps.kinds.of(ref.type).table, ref.id);
  }

  private lookup(keys: Iterable<NodeKey>, organizationId: string, db: Kysely<Database> = this.deps.db) {
    return lookupEntities(db, this.deps.kinds, organizationId, keys);
  }

  private async load(organizationId: string, focus?: EntityRef, db: Kysely<Database> = this.deps.db) {
    const rows = await edgesOf(db, organizationId);
    return new DependencyGraph(rows, focus?.type === 'topic' ? [focus.id] : []);
  }

  /** 403 when the caller cannot read the focus's type, 404 when the organization has no such entity. */
  private async focusOf(organizationId: string, ref: EntityRef, scopes: ReadonlySet<string>) {
    const scope = this.deps.kinds.readScope(ref.type);
    if (!scopes.has(scope)) throw insufficientScope(`the scope ${scope}`, scope);
    if (ref.type === 'topic') return;
    const found = await this.lookup([nodeKey(ref.type, ref.id)], organizationId);
    if (!found.has(nodeKey(ref.type, ref.id))) throw notFound(ref.type);
  }

  private async presenter(
    organizationId: string,
    graph: DependencyGraph,
    keys: Iterable<NodeKey>,
    scopes: ReadonlySet<string>,
  ) {
    const facts = await this.lookup(keys, organizationId);
    return new NodePresenter(this.deps.kinds, facts, scopes, graph.unresolved);
  }

  /** The neighbourhood of an entity within `depth` steps in one direction or both. */
  async focus(
    organizationId: string,
    ref: EntityRef,
    depth: number,
    direction: 'dependencies' | 'dependents' | 'both',
    scopes: ReadonlySet<string>,
  ) {
    await this.focusOf(organizationId, ref, scopes);
    const graph = await this.load(organizationId, ref);
    const start = nodeKey(ref.type, ref.id);
    const { nodes, edges } = graph.neighbourhood(start, depth, direction);
    const show = await this.presenter(organizationId, graph, nodes.keys(), scopes);
    return {
      focus: show.key(start),
      depth,
      direction,
      nodes: [...nodes].map(([key, d]) => ({ ...show.view(key), depth: d })),
      edges: edges.map((e) => ({
        from: show.key(e.from),
        to: show.key(e.to),
        relation: e.relation,
        via: e.via,
        dependent: show.key(e.dependent),
        ...(e.disabled ? { disabled: true } : {}),
      })),
    };
  }

  /** What an entity depends on, or what depends on it: direct, or transitive with depth and path. */
  async related(
    organizationId: string,
    ref: EntityRef,
    direction: 'dependencies' | 'dependents',
    transitive: boolean,
    types: readonly EntityType[] | undefined,
    scopes: ReadonlySet<string>,
  ) {
    await this.focusOf(organizationId, ref, scopes);
    const graph = await this.load(organizationId, ref);
    const start = nodeKey(ref.type, ref.id);
    const reached = graph.walk(start, direction, transitive ? Number.POSITIVE_INFINITY : 1);
    const keys = [...reached.keys()].filter(
      (k) => k !== start && (!types || types.includes(splitKey(k).type)),
    );
    const show = await this.presenter(organizationId, graph, reached.keys(), scopes);
    return keys
      .sort((a, b) => reached.get(a)!.depth - reached.get(b)!.depth || a.localeCompare(b))
      .map((key) => {
        const steps = DependencyGraph.pathTo(reached, key);
        const path = direction === 'dependents' ? steps : steps.reverse();
        const step = reached.get(key)!;
        return {
          entity: show.view(key),
          depth: step.depth,
          relation: step.edge!.relation,
          via: step.edge!.via,
          path: path.map((s) => show.key(s.node)),
        };
      });
  }

  /**
   * What `action` on the entity does to everything that depends on it; for `update`, `proposed` (the
   * proposed body of the entity) lets each dependent be judged by the update rules.
   */
  async impact(
    organizationId: string,
    ref: EntityRef,
    action: ImpactAction,
    scopes: ReadonlySet<string>,
    proposed?: unknown,
  ): Promise<ImpactView> {
    if (proposed !== undefined && action !== 'update')
      throw badRequest(`proposed: only an update has a proposed change, not a ${action}`);
    const allowed = this.deps.kinds.of(ref.type).actions ?? [];
    if (!allowed.includes(action)) {
      throw badRequest(
        allowed.length === 0
          ? `action: a ${ref.type} has no actions to assess`
          : `action: ${action} does not apply to a ${ref.type}; one of ${allowed.join(', ')}`,
      );
    }
    await this.focusOf(organizationId, ref, scopes);
    const graph = await this.load(organizationId, ref);
    const start = nodeKey(ref.type, ref.id);
    const reached = graph.walk(start, 'dependents');
    const show = await this.presenter(organizationId, graph, reached.keys(), scopes);
    const facts = await this.lookup(reached.keys(), organizationId);
    const updateFacts =
      proposed === undefined
        ? undefined
        : await loadUpdateFacts(
            this.deps.db,
            this.deps.kinds,
            organizationId,
            ref,
            proposed,
            reached.keys(),
            (k) => show.label(k),
          );
    const affected = assessImpact(
      graph,
      start,
      action,
      (key) => ({ label: show.label(key), active: facts.get(key)?.active ?? true }),
      updateFacts && ((nodes, edges) => classifyUpdate(updateFacts, nodes, edges)),
    );
    return this.impactView(show, start, action, affected);
  }

  private impactView(
    show: NodePresenter,
    start: NodeKey,
    action: ImpactAction,
    affected: AffectedEntry[],
  ): ImpactView {
    const summary: Record<Severity, number> = { breaks: 0, degrades: 0, info: 0 };
    for (const a of affected) summary[a.severity]++;
    return {
      entity: show.view(start),
      action,
      affected: affected.map((a) => ({
        entity: show.view(a.node),
        severity: a.severity,
        reason: a.reason,
        path: a.path.map((s) => ({
          ...show.view(s.node),
          ...(s.relation ? { relation: s.relation, via: s.via ?? null } : {}),
        })),
      })),
      summary,
      // Nothing refuses an update: only a delete, stop or disable can be blocked.
      blocking: action !== 'update' && isBlocking(affected),
    };
  }

  /**
   * Refuses a delete or stop (409 `conflict` with the impact) while something active depends on the
   * entity (of `blockingTypes`, when given). The caller has the write scope of the entity; dependents of types it cannot
   * read are counted but redacted. `db`: the transaction that deletes or stops it, which has locked
   * its row (see `impactCheck`), so that what it reads is what the delete goes ahead against.
   */
  async guard(
    organizationId: string,
    ref: EntityRef,
    action: 'delete' | 'stop' | 'disable',
    scopes: ReadonlySet<string>,
    blockingTypes?: readonly EntityType[],
    db: Kysely<Database> = this.deps.db,
  ): Promise<void> {
    const graph = await this.load(organizationId, undefined, db);
    const start = nodeKey(ref.type, ref.id);
    if (graph.dependentsOf(start).length === 0) return;
    // An entity the organization does not have: the route answers its own 404.
    if ((await this.lookup([start], organizationId, db)).size === 0) return;
    const reached = graph.walk(start, 'dependents');
    const facts = await this.lookup(reached.keys(), organizationId, db);
    const readable = new Set([...scopes, this.deps.kinds.readScope(ref.type)]);
    const show = new NodePresenter(this.deps.kinds, facts, readable, graph.unresolved);
    const affected = assessImpact(graph, start, action, (key) => ({
      label: show.label(key),
      active: facts.get(key)?.active ?? true,
    }));
    const blocking = affected.filter(
      (a) => a.severity !== 'info' && (!blockingTypes || blockingTypes.includes(splitKey(a.node).type)),
    );
    if (blocking.length === 0) return;
    const impact = this.impactView(show, start, action, affected);
    const named = blocking.slice(0, 5).map((a) => `${show.label(a.node)} (${a.severity})`);
    const more = blocking.length - named.length;
    throw withDetails(
      conflict(
        `${named.join(', ')}${more > 0 ? ` and ${more} more` : ''} depend on this ${ref.type}; send force=true to ${action} it anyway`,
      ),
      { impact },
    );
  }

  /**
   * Entities nothing uses, each kind judging its own (`EntityKind.unused`): functions no pipeline calls
   * that publish nothing, connections without functions that no pipeline uses, models no pipeline or
   * model uses and that are bound to no topic, disabled pipelines no pipeline runs or waits for, folders
   * without dashboards or folders, topics nothing reads, publishes or binds that received no value in
   * the last `quietDays` days.
   */
  async orphans(
    organizationId: string,
    types: readonly EntityType[] | undefined,
    scopes: ReadonlySet<string>,
    quietDays = 30,
  ) {
    const { kinds, db } = this.deps;
    for (const t of types ?? []) {
      const scope = kinds.readScope(t);
      if (!scopes.has(scope)) throw insufficientScope(`the scope ${scope}`, scope);
    }
    const readable = (types ?? ENTITY_TYPES).filter(
      (t) => kinds.of(t).unused && scopes.has(kinds.readScope(t)),
    );
    const graph = await this.load(organizationId);
    const entities = await allEntities(db, kinds, organizationId, readable);
    const facts = new Map(entities.map((e) => [nodeKey(e.type, e.id), e]));
    const show = new NodePresenter(kinds, facts, scopes, graph.unresolved);
    const quietSinceUs = (this.deps.clock.now() - quietDays * 86_400_000) * 1000;
    const out: { entity: NodeView; reason: string }[] = [];
    for (const type of readable) {
      const unused = await kinds.of(type).unused!({
        db,
        organizationId,
        graph,
        entities: entities.filter((e) => e.type === type),
        quietSinceUs,
        quietDays,
      });
      for (const u of unused) out.push({ entity: show.view(nodeKey(type, u.id)), reason: u.reason });
    }
    return out.sort(
      (a, b) =>
        a.entity.type.localeCompare(b.entity.type) ||
        (a.entity.name ?? '').localeCompare(b.entity.name ?? ''),
    );
  }
}
