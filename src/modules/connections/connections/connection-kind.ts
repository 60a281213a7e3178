import { badRequest } from '../../../platform/errors.js';
import { proposedBoolean } from '../../graph/impact/proposed-change.js';
import type { UpdateRules } from '../../graph/impact/update-rules.js';
import type { EntityKind } from '../../graph/kinds/entity-kinds.js';
import { edgeOwner, entityRows, unusedWhen } from '../../graph/kinds/kind-rows.js';
import { functionDirection, protocolOf } from '../protocols/protocol-registry.js';
import { connectionExchange } from './connection-exchange.js';

/** A connection refers to nothing; its edges go with it, its functions' too (they are deleted with it). */
const connectionEdges = edgeOwner(
  'connection',
  'connections',
  (trx, ids) =>
    trx.selectFrom('connections').select(['id', 'organization_id']).where('id', 'in', ids).execute(),
  () => ({ references: [] }),
  { parts: ['function'] },
);

/** What an update of a connection changes, beside the connection as it is and its functions' directions. */
interface ConnectionChange {
  protocol: string;
  readOnly: boolean;
  proposed: { protocol?: string; readOnly?: boolean };
  functionDirections: Map<string, string | undefined>;
}

/**
 * A connection's update breaks what uses it when its `protocol` changes (its functions' types belong to
 * the old one; pipelines call it as the old one), and degrades a pipeline node that writes through it
 * when it becomes read-only.
 */
const connectionUpdateRules: UpdateRules<ConnectionChange> = {
  members: ['name', 'description', 'protocol', 'config', 'labels', 'readOnly', 'autoStart', 'version'],
  async read(db, _organizationId, id, proposed) {
    const c = await db
      .selectFrom('connections')
      .select(['protocol', 'read_only'])
      .where('id', '=', id)
      .executeTakeFirstOrThrow();
    const functionDirections = new Map<string, string | undefined>();
    for (const f of await db
      .selectFrom('connection_functions')
      .select(['id', 'type'])
      .where('connection_id', '=', id)
      .execute())
      functionDirections.set(f.id, functionDirection(c.protocol, f.type));
    const change: ConnectionChange = {
      protocol: c.protocol,
      readOnly: Number(c.read_only) === 1,
      proposed: {},
      functionDirections,
    };
    if (proposed.protocol !== undefined) {
      if (typeof proposed.protocol !== 'string') throw badRequest('proposed.protocol: must be a string');
      protocolOf(proposed.protocol, 'proposed.protocol');
      change.proposed.protocol = proposed.protocol;
    }
    if (proposed.readOnly !== undefined) change.proposed.readOnly = proposedBoolean(proposed, 'readOnly');
    return change;
  },
  verdict(c, step) {
    const { protocol, readOnly } = c.proposed;
    const via = step.via;
    if (protocol !== undefined && protocol !== c.protocol) {
      return step.touchType === 'function'
        ? { severity: 'breaks', detail: `protocol: its type belongs to ${c.protocol}, not ${protocol}` }
        : {
            severity: 'breaks',
            detail: `protocol: node '${via}' calls it as ${c.protocol}, and it becomes ${protocol}`,
          };
    }
    if (readOnly === true && !c.readOnly && step.touchType === 'pipeline') {
      // The node's call names the function it runs (NODE-CONTRACT: `functionId`).
      const parameters = step.part()?.parameters as Record<string, unknown> | undefined;
      const fnId = typeof parameters?.functionId === 'string' ? parameters.functionId : '';
      if (c.functionDirections.get(fnId) === 'write')
        return {
          severity: 'degrades',
          detail: `readOnly: node '${via}' writes through it, and a read-only connection refuses writes`,
        };
    }
    return undefined;
  },
};

/** Connections as the graph, export and import handle them (their functions: function-kind.ts). */
export const connectionKind: EntityKind = {
  type: 'connection',
  scopeFamily: 'connectors',
  table: 'connections',
  async facts(db, organizationId, ids) {
    const rows = await entityRows(
      db.selectFrom('connections').select(['id', 'name', 'desired_state']),
      organizationId,
      ids,
    );
    return rows.map((r) => ({
      type: 'connection',
      id: r.id,
      name: r.name,
      status: r.desired_state,
      active: true,
    }));
  },
  edges: [connectionEdges],
  actions: ['delete', 'stop', 'update'],
  update: connectionUpdateRules,
  exchange: connectionExchange,
  unused: unusedWhen(
    'it has no functions and no pipeline uses it',
    (graph, key) => graph.dependentsOf(key).length === 0,
  ),
};
