import type { Kysely } from 'kysely';
import type { Database } from '../../storage/tables.js';
import { type NodeKey, nodeKey, splitKey } from './edges/dependency-graph.js';
import type { EntityFacts, EntityKinds } from './kinds/entity-kinds.js';

export type { EntityFacts } from './kinds/entity-kinds.js';

const CHUNK = 500;

function chunks<T>(items: T[]): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += CHUNK) out.push(items.slice(i, i + CHUNK));
  return out;
}

/**
 * The facts of the entities named by `keys`, looked up in the organization only: a key naming another
 * organization's entity (or nothing) is absent from the answer, so the graph shows it as missing. Each
 * kind answers for its own (`EntityKind.facts`); kinds without rows (topics) answer nothing.
 */
export async function lookupEntities(
  db: Kysely<Database>,
  kinds: EntityKinds,
  organizationId: string,
  keys: Iterable<NodeKey>,
): Promise<Map<NodeKey, EntityFacts>> {
  const byType = new Map<string, string[]>();
  for (const key of keys) {
    const { type, id } = splitKey(key);
    if (!kinds.of(type).facts) continue;
    const ids = byType.get(type) ?? [];
    ids.push(id);
    byType.set(type, ids);
  }
  const out = new Map<NodeKey, EntityFacts>();
  for (const [type, ids] of byType) {
    const kind = kinds.of(type);
    for (const part of chunks(ids)) {
      for (const facts of await kind.facts!(db, organizationId, part))
        out.set(nodeKey(type, facts.id), facts);
    }
  }
  return out;
}

/** Every entity of the organization of the given types (kinds without rows, as topics: none). */
export async function allEntities(
  db: Kysely<Database>,
  kinds: EntityKinds,
  organizationId: string,
  types: readonly string[],
): Promise<EntityFacts[]> {
  const out: EntityFacts[] = [];
  for (const type of types) out.push(...((await kinds.of(type).facts?.(db, organizationId, null)) ?? []));
  return out;
}
