import { badRequest } from '../../../platform/errors.js';
import { isObject, parseJson } from '../../graph/edges/references.js';
import { proposedBoolean } from '../../graph/impact/proposed-change.js';
import type { ReferringPart, UpdateRules } from '../../graph/impact/update-rules.js';
import type { EntityKind } from '../../graph/kinds/entity-kinds.js';
import { edgeOwner, entityRows, unusedWhen } from '../../graph/kinds/kind-rows.js';
import { pipelineExchange } from './pipeline-exchange.js';
import { pipelineReferences } from './pipeline-references.js';

/**
 * A pipeline's edges, one or two per referencing node. Only an enabled pipeline must refer to entities
 * that exist: a disabled one may refer to what is not there yet (the graph shows it missing).
 */
const pipelineEdges = edgeOwner(
  'pipeline',
  'pipelines',
  (trx, ids) =>
    trx
      .selectFrom('pipelines')
      .select(['id', 'organization_id', 'nodes', 'enabled'])
      .where('id', 'in', ids)
      .execute(),
  (row) => ({ references: pipelineReferences(row), active: Boolean(row.enabled) }),
  {
    refuseMissing: (ref) =>
      `node '${ref.via}' refers to a ${ref.targetType} the organization does not have (${ref.targetId}); an enabled pipeline can only refer to existing ones`,
  },
);

/** What an update of a pipeline changes: its `enabled` flag, and the topics its nodes publish after it. */
interface PipelineChange {
  enabled?: boolean;
  /** The literal `uns.publish` topics of the proposed nodes; undefined: nodes not given. */
  published?: Set<string>;
}

/**
 * A pipeline's update breaks a reader of a topic its nodes no longer publish, and degrades a pipeline
 * triggered by it or running it when it is disabled. As a dependent, its parts are its nodes (by name):
 * the rules of what it uses read them (a call's function, a mapping's fields).
 */
const pipelineUpdateRules: UpdateRules<PipelineChange> = {
  members: ['name', 'description', 'labels', 'enabled', 'settings', 'nodes', 'edges', 'version'],
  async read(_db, _organizationId, _id, proposed) {
    const change: PipelineChange = {};
    if (proposed.enabled !== undefined) change.enabled = proposedBoolean(proposed, 'enabled');
    if (proposed.nodes !== undefined) {
      const nodes = proposed.nodes;
      if (!Array.isArray(nodes) || !nodes.every(isObject))
        throw badRequest('proposed.nodes: must be an array of nodes');
      change.published = new Set(
        nodes
          .filter((n) => n.type === 'uns.publish')
          .map((n) => (n.parameters as { topic?: unknown } | undefined)?.topic)
          .filter((t): t is string => typeof t === 'string' && !t.includes('{{')),
      );
    }
    return change;
  },
  verdict(p, step) {
    const { topic, touchType, touchEdge, via } = step;
    if (topic !== null && step.lastEdge.relation === 'publishes' && p.published && !p.published.has(topic))
      return { severity: 'breaks', detail: `nodes: it no longer publishes ${topic}` };
    if (p.enabled === false && touchType === 'pipeline') {
      if (touchEdge.relation === 'triggered-by')
        return {
          severity: 'degrades',
          detail: `enabled: it is disabled, so node '${via}' is no longer triggered`,
        };
      if (touchEdge.relation === 'runs-pipeline')
        return {
          severity: 'degrades',
          detail: `enabled: node '${via}' runs a pipeline that becomes disabled`,
        };
    }
    return undefined;
  },
  async parts(db, organizationId, ids) {
    const out = new Map<string, ReferringPart[]>();
    for (const row of await db
      .selectFrom('pipelines')
      .select(['id', 'nodes'])
      .where('organization_id', '=', organizationId)
      .where('id', 'in', ids)
      .execute())
      out.set(row.id, parseJson(row.nodes, []));
    return out;
  },
};

/** Pipelines as the graph, export and import handle them. */
export const pipelineKind: EntityKind = {
  type: 'pipeline',
  scopeFamily: 'pipelines',
  table: 'pipelines',
  async facts(db, organizationId, ids) {
    const rows = await entityRows(
      db.selectFrom('pipelines').select(['id', 'name', 'enabled']),
      organizationId,
      ids,
    );
    return rows.map((r) => {
      const enabled = Number(r.enabled) === 1;
      return {
        type: 'pipeline',
        id: r.id,
        name: r.name,
        status: enabled ? 'enabled' : 'disabled',
        active: enabled,
      };
    });
  },
  edges: [pipelineEdges],
  actions: ['delete', 'disable', 'update'],
  update: pipelineUpdateRules,
  exchange: pipelineExchange,
  unused: unusedWhen(
    'it is disabled and no pipeline runs it or waits for it',
    (graph, key, e) => !e.active && graph.dependentsOf(key).length === 0,
  ),
};
