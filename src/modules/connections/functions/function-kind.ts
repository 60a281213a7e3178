import { badRequest } from '../../../platform/errors.js';
import { isObject, parseJson } from '../../graph/edges/references.js';
import type { UpdateRules, Verdict } from '../../graph/impact/update-rules.js';
import type { EntityKind } from '../../graph/kinds/entity-kinds.js';
import { edgeOwner, entityRows, unusedWhen } from '../../graph/kinds/kind-rows.js';
import { functionDirection, protocolOf } from '../protocols/protocol-registry.js';
import { functionReferences } from './function-references.js';

/** A function's edges: to its connection, and to the topics it publishes (its direction from the protocol). */
const functionEdges = edgeOwner(
  'function',
  'connection_functions',
  (trx, ids) =>
    trx
      .selectFrom('connection_functions as f')
      .leftJoin('connections as c', 'c.id', 'f.connection_id')
      .select(['f.id', 'f.organization_id', 'f.connection_id', 'f.type', 'f.uns', 'c.protocol'])
      .where('f.id', 'in', ids)
      .execute(),
  (row) => ({ references: functionReferences(row, functionDirection(row.protocol, row.type)) }),
);

/** What an update of a function changes, beside the function as it is. */
interface FunctionChange {
  direction: string | undefined;
  nextDirection: string | undefined;
  nextType: string;
  /** The declared parameter names, and the proposed ones when given. */
  parameters: string[];
  proposedParameters?: string[];
  uns: { topic: string; intervalMs: number | null } | null;
  /** The proposed UNS publication when given; null: it publishes nothing. */
  proposedUns?: { topic: string; intervalMs: number | null } | null;
}

/** Reads the proposed `type` (one of the protocol's function types), `parameters` and `uns`. */
function readProposed(proposed: Record<string, unknown>, protocol: string) {
  const out: { type?: string; parameters?: string[]; uns?: FunctionChange['proposedUns'] } = {};
  const p = proposed;
  if (p.type !== undefined) {
    if (typeof p.type !== 'string') throw badRequest('proposed.type: must be a string');
    if (!protocolOf(protocol).functionTypes.has(p.type))
      throw badRequest(
        `proposed.type: '${p.type.slice(0, 60)}' is not a function type of protocol ${protocol}`,
      );
    out.type = p.type;
  }
  if (p.parameters !== undefined) {
    if (!Array.isArray(p.parameters) || !p.parameters.every((x) => isObject(x) && typeof x.name === 'string'))
      throw badRequest('proposed.parameters: must be an array of {name, type} declarations');
    out.parameters = p.parameters.map((x) => (x as { name: string }).name);
  }
  if (p.uns !== undefined) {
    if (p.uns === null) out.uns = null;
    else if (isObject(p.uns) && typeof p.uns.topic === 'string')
      out.uns = {
        topic: p.uns.topic,
        intervalMs: typeof p.uns.intervalMs === 'number' ? p.uns.intervalMs : null,
      };
    else throw badRequest('proposed.uns: must be null or {topic, intervalMs}');
  }
  return out;
}

/** Under a pipeline node that calls the function (NODE-CONTRACT `connection.call`: `confirmWrites`, its parameters). */
function callVerdict(
  f: FunctionChange,
  node: Record<string, unknown> | undefined,
  via: string | null,
): Verdict | undefined {
  if (f.nextDirection !== f.direction) {
    if (f.nextDirection === 'subscribe')
      return {
        severity: 'breaks',
        detail: `type: it becomes a subscription (${f.nextType}), which node '${via}' cannot call`,
      };
    if (f.nextDirection === 'write' && node?.confirmWrites !== true)
      return {
        severity: 'breaks',
        detail: `type: it becomes a write (${f.nextType}), and node '${via}' does not set confirmWrites`,
      };
    return {
      severity: 'degrades',
      detail: `type: node '${via}' now ${f.nextDirection === 'write' ? 'writes to' : 'reads from'} the device (${f.nextType})`,
    };
  }
  if (f.proposedParameters) {
    const passed = Object.keys((node?.parameters ?? {}) as Record<string, unknown>);
    const dropped = passed.find((k) => f.parameters.includes(k) && !f.proposedParameters!.includes(k));
    if (dropped)
      return {
        severity: 'breaks',
        detail: `parameters: '${dropped}', which node '${via}' passes, is no longer declared`,
      };
  }
  return undefined;
}

/**
 * A function's update breaks a pipeline node that calls it when its `type` makes it a subscription, or
 * a write the node does not confirm, or drops a parameter the node passes; a pipeline triggered by it
 * when it is no longer a subscription; a reader of the topic it publishes when `uns` stops publishing it.
 */
const functionUpdateRules: UpdateRules<FunctionChange> = {
  members: ['name', 'description', 'type', 'config', 'parameters', 'uns'],
  async read(db, _organizationId, id, proposed) {
    const f = await db
      .selectFrom('connection_functions as f')
      .innerJoin('connections as c', 'c.id', 'f.connection_id')
      .select(['f.type', 'f.parameters', 'f.uns', 'c.protocol'])
      .where('f.id', '=', id)
      .executeTakeFirstOrThrow();
    const p = readProposed(proposed, f.protocol);
    const nextType = p.type ?? f.type;
    const uns = parseJson<{ topic: string; intervalMs?: number } | null>(f.uns, null);
    return {
      direction: functionDirection(f.protocol, f.type),
      nextDirection: functionDirection(f.protocol, nextType),
      nextType,
      parameters: parseJson<{ name: string }[]>(f.parameters, []).map((x) => x.name),
      ...(p.parameters ? { proposedParameters: p.parameters } : {}),
      uns: uns ? { topic: uns.topic, intervalMs: uns.intervalMs ?? null } : null,
      ...(p.uns !== undefined ? { proposedUns: p.uns } : {}),
    };
  },
  verdict(f, step) {
    const { touchType, touchEdge, via, topic } = step;
    if (touchType === 'pipeline' && touchEdge.relation === 'uses-function')
      return callVerdict(f, step.part()?.parameters as Record<string, unknown> | undefined, via);
    if (touchType === 'pipeline' && touchEdge.relation === 'triggered-by' && f.nextDirection !== 'subscribe')
      return {
        severity: 'breaks',
        detail: `type: it is no longer a subscription (${f.nextType}), so node '${via}' is never triggered`,
      };
    if (topic !== null && step.lastEdge.relation === 'publishes' && f.proposedUns !== undefined) {
      const uns = f.proposedUns;
      if (uns === null || uns.topic !== topic)
        return { severity: 'breaks', detail: `uns.topic: it no longer publishes ${topic}` };
      if (uns.intervalMs !== f.uns?.intervalMs)
        return {
          severity: 'degrades',
          detail: `uns.intervalMs: ${topic} is read every ${uns.intervalMs ?? 'default'} ms instead of ${f.uns?.intervalMs ?? 'default'} ms`,
        };
    }
    return undefined;
  },
};

/** Functions as the graph handles them; a bundle carries them inside their connection. */
export const functionKind: EntityKind = {
  type: 'function',
  scopeFamily: 'connectors',
  table: 'connection_functions',
  partOf: 'connection',
  async facts(db, organizationId, ids) {
    const rows = await entityRows(
      db.selectFrom('connection_functions').select(['id', 'name', 'connection_id']),
      organizationId,
      ids,
    );
    return rows.map((r) => ({
      type: 'function',
      id: r.id,
      name: r.name,
      status: null,
      active: true,
      connectionId: r.connection_id,
    }));
  },
  edges: [functionEdges],
  actions: ['delete', 'update'],
  update: functionUpdateRules,
  unused: unusedWhen(
    'no pipeline calls it or is triggered by it, and it publishes nothing to the UNS',
    (graph, key) =>
      graph.dependentsOf(key).length === 0 &&
      !graph.edges.some((x) => x.from === key && x.relation === 'publishes'),
  ),
};
