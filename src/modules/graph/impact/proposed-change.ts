import { badRequest } from '../../../platform/errors.js';
import { protocolOf } from '../../connections/protocols/protocol-registry.js';
import type { EntityType } from '../edges/references.js';

/**
 * The proposed new state of an entity for the impact of an `update`: the members of its PUT body that
 * the rules read (anything else of the body is accepted and ignored). Absent members are unchanged.
 */
export interface ProposedChange {
  /** The members given, for reasons ("not affected by the change to name, description"). */
  members: string[];
  protocol?: string;
  readOnly?: boolean;
  /** A function's type (its direction follows from it and the connection's protocol). */
  type?: string;
  /** A function's declared parameter names. */
  parameters?: string[];
  /** A function's UNS publication; null: it publishes nothing. */
  uns?: { topic: string; intervalMs: number | null } | null;
  /** A model's fields, as stored. */
  fields?: unknown[];
  /** A pipeline's nodes, as stored. */
  nodes?: { id?: unknown; name?: unknown; type?: unknown; parameters?: unknown }[];
  enabled?: boolean;
}

/** The members of each type's body; null: any (no rule reads a dashboard's or folder's members). */
const MEMBERS: Record<EntityType, readonly string[] | null> = {
  connection: ['name', 'description', 'protocol', 'config', 'labels', 'readOnly', 'autoStart', 'version'],
  function: ['name', 'description', 'type', 'config', 'parameters', 'uns'],
  model: ['name', 'description', 'labels', 'fields', 'version'],
  pipeline: ['name', 'description', 'labels', 'enabled', 'settings', 'nodes', 'edges', 'version'],
  dashboard: null,
  folder: null,
  topic: [],
};

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * Checks `proposed` against the members of the entity type's body (400 naming the member otherwise)
 * and keeps what the update rules read. `protocol` is the connection's (a function's type must be one
 * of its function types).
 */
export function readProposedChange(
  type: EntityType,
  proposed: unknown,
  protocol: string | undefined,
): ProposedChange {
  if (!isObject(proposed)) throw badRequest('proposed: must be an object (the proposed body of the entity)');
  const allowed = MEMBERS[type];
  if (allowed?.length === 0) throw badRequest(`proposed: a ${type} has no update to assess`);
  const unknown = allowed ? Object.keys(proposed).find((k) => !allowed.includes(k)) : undefined;
  if (allowed && unknown !== undefined)
    throw badRequest(
      `proposed.${unknown.slice(0, 40)}: not a member of a ${type}; one of ${allowed.join(', ')}`,
    );
  const out: ProposedChange = { members: Object.keys(proposed) };
  const p = proposed;
  if (p.protocol !== undefined) {
    if (typeof p.protocol !== 'string') throw badRequest('proposed.protocol: must be a string');
    protocolOf(p.protocol, 'proposed.protocol');
    out.protocol = p.protocol;
  }
  if (p.readOnly !== undefined) {
    if (typeof p.readOnly !== 'boolean') throw badRequest('proposed.readOnly: must be a boolean');
    out.readOnly = p.readOnly;
  }
  if (p.enabled !== undefined) {
    if (typeof p.enabled !== 'boolean') throw badRequest('proposed.enabled: must be a boolean');
    out.enabled = p.enabled;
  }
  if (type === 'function' && p.type !== undefined) {
    if (typeof p.type !== 'string') throw badRequest('proposed.type: must be a string');
    if (protocol && !protocolOf(protocol).functionTypes.has(p.type))
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
  if (p.fields !== undefined) {
    if (!Array.isArray(p.fields) || !p.fields.every((f) => isObject(f) && typeof f.name === 'string'))
      throw badRequest('proposed.fields: must be an array of fields, each with a name and a type');
    out.fields = p.fields;
  }
  if (p.nodes !== undefined) {
    if (!Array.isArray(p.nodes) || !p.nodes.every(isObject))
      throw badRequest('proposed.nodes: must be an array of nodes');
    out.nodes = p.nodes;
  }
  return out;
}
