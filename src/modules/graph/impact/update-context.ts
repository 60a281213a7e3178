import type { Kysely } from 'kysely';
import type { Database } from '../../../storage/tables.js';
import { protocolOf } from '../../connections/protocols/protocol-registry.js';
import { type NodeKey, splitKey } from '../edges/dependency-graph.js';
import type { EntityRef } from '../graph.service.js';
import { readProposedChange } from './proposed-change.js';
import type { UpdateFacts } from './update-rules.js';

const parse = <T>(text: string | null | undefined, fallback: T): T => {
  if (text === null || text === undefined) return fallback;
  try {
    return JSON.parse(text) as T;
  } catch {
    return fallback;
  }
};

function directionOf(protocol: string, type: string): string | undefined {
  try {
    return protocolOf(protocol).functionTypes.get(type)?.type.direction;
  } catch {
    return undefined;
  }
}

interface FieldLike {
  name: string;
  type?: unknown;
  required?: unknown;
  fields?: unknown;
  items?: { type?: unknown };
  model?: { id?: unknown };
}

/** A field's type as compared: its type, an array's item type, a model field's model. */
const shapeOf = (f: FieldLike) =>
  `${String(f.type)}${f.type === 'array' ? `<${String(f.items?.type)}>` : ''}${f.type === 'model' ? `<${String(f.model?.id)}>` : ''}`;

/** What `next` fields remove, retype or make required relative to `current`, by dotted path (objects recursed). */
export function diffFields(current: unknown[], next: unknown[], prefix = '') {
  const out = { removed: [] as string[], retyped: [] as string[], required: [] as string[] };
  const byName = new Map((next as FieldLike[]).map((f) => [f.name, f]));
  const had = new Set((current as FieldLike[]).map((f) => f.name));
  for (const g of next as FieldLike[])
    if (!had.has(g.name) && g.required === true) out.required.push(`${prefix}${g.name}`);
  for (const f of current as FieldLike[]) {
    const path = `${prefix}${f.name}`;
    const g = byName.get(f.name);
    if (!g) out.removed.push(path);
    else if (shapeOf(f) !== shapeOf(g)) out.retyped.push(path);
    else {
      // Optional unless `required: true` (as model-changes.ts reads it).
      if (f.required !== true && g.required === true) out.required.push(path);
      if (f.type === 'object' && Array.isArray(f.fields) && Array.isArray(g.fields)) {
        const inner = diffFields(f.fields, g.fields, `${path}.`);
        out.removed.push(...inner.removed);
        out.retyped.push(...inner.retyped);
        out.required.push(...inner.required);
      }
    }
  }
  return out;
}

/**
 * Reads what the update rules need: the entity's current state, the proposed change (400 when of the
 * wrong shape), and the nodes of the pipelines among `reached`. Null when the entity has no row.
 */
export async function loadUpdateFacts(
  db: Kysely<Database>,
  organizationId: string,
  ref: EntityRef,
  proposedBody: unknown,
  reached: Iterable<NodeKey>,
  label: (key: NodeKey) => string,
): Promise<UpdateFacts> {
  const pipelineIds = [...reached].filter((k) => splitKey(k).type === 'pipeline').map((k) => splitKey(k).id);
  const pipelineNodes = new Map<string, { name?: unknown; type?: unknown; parameters?: unknown }[]>();
  if (pipelineIds.length > 0)
    for (const row of await db
      .selectFrom('pipelines')
      .select(['id', 'nodes'])
      .where('organization_id', '=', organizationId)
      .where('id', 'in', pipelineIds)
      .execute())
      pipelineNodes.set(row.id, parse(row.nodes, []));
  const functionDirections = new Map<string, string | undefined>();
  const base = { pipelineNodes, functionDirections, label };
  switch (ref.type) {
    case 'connection': {
      const c = await db
        .selectFrom('connections')
        .select(['protocol', 'read_only'])
        .where('id', '=', ref.id)
        .executeTakeFirstOrThrow();
      for (const f of await db
        .selectFrom('connection_functions')
        .select(['id', 'type'])
        .where('connection_id', '=', ref.id)
        .execute())
        functionDirections.set(f.id, directionOf(c.protocol, f.type));
      return {
        ...base,
        proposed: readProposedChange('connection', proposedBody, undefined),
        connection: { protocol: c.protocol, readOnly: Number(c.read_only) === 1 },
      };
    }
    case 'function': {
      const f = await db
        .selectFrom('connection_functions as f')
        .innerJoin('connections as c', 'c.id', 'f.connection_id')
        .select(['f.type', 'f.parameters', 'f.uns', 'c.protocol'])
        .where('f.id', '=', ref.id)
        .executeTakeFirstOrThrow();
      const proposed = readProposedChange('function', proposedBody, f.protocol);
      const nextType = proposed.type ?? f.type;
      const uns = parse<{ topic: string; intervalMs?: number } | null>(f.uns, null);
      return {
        ...base,
        proposed,
        fn: {
          direction: directionOf(f.protocol, f.type),
          nextDirection: directionOf(f.protocol, nextType),
          nextType,
          parameters: parse<{ name: string }[]>(f.parameters, []).map((p) => p.name),
          uns: uns ? { topic: uns.topic, intervalMs: uns.intervalMs ?? null } : null,
        },
      };
    }
    case 'model': {
      const m = await db
        .selectFrom('models')
        .select('fields')
        .where('id', '=', ref.id)
        .executeTakeFirstOrThrow();
      const proposed = readProposedChange('model', proposedBody, undefined);
      return {
        ...base,
        proposed,
        ...(proposed.fields ? { fields: diffFields(parse(m.fields, []), proposed.fields) } : {}),
      };
    }
    case 'pipeline': {
      const proposed = readProposedChange('pipeline', proposedBody, undefined);
      const published = proposed.nodes
        ? new Set(
            proposed.nodes
              .filter((n) => n.type === 'uns.publish')
              .map((n) => (n.parameters as { topic?: unknown } | undefined)?.topic)
              .filter((t): t is string => typeof t === 'string' && !t.includes('{{')),
          )
        : undefined;
      return { ...base, proposed, ...(published ? { published } : {}) };
    }
    default:
      return { ...base, proposed: readProposedChange(ref.type, proposedBody, undefined) };
  }
}
