import type { Kysely } from 'kysely';
import type { Database } from '../../storage/tables.js';
import { type NodeKey, nodeKey, splitKey } from './edges/dependency-graph.js';
import type { EntityType } from './edges/references.js';

/** What the graph shows of an entity of the organization. */
export interface EntityFacts {
  type: EntityType;
  id: string;
  name: string;
  /** `running` / `stopped` (connections: desired state), `enabled` / `disabled` (pipelines), else null. */
  status: string | null;
  /** False for a disabled pipeline. */
  active: boolean;
  /** A function's connection (its pages live under it). */
  connectionId?: string;
}

const CHUNK = 500;

function chunks<T>(items: T[]): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += CHUNK) out.push(items.slice(i, i + CHUNK));
  return out;
}

/**
 * The facts of the entities named by `keys`, looked up in the organization only: a key naming another
 * organization's entity (or nothing) is absent from the answer, so the graph shows it as missing.
 */
export async function lookupEntities(
  db: Kysely<Database>,
  organizationId: string,
  keys: Iterable<NodeKey>,
): Promise<Map<NodeKey, EntityFacts>> {
  const byType = new Map<EntityType, string[]>();
  for (const key of keys) {
    const { type, id } = splitKey(key);
    if (type === 'topic') continue;
    const ids = byType.get(type) ?? [];
    ids.push(id);
    byType.set(type, ids);
  }
  const out = new Map<NodeKey, EntityFacts>();
  const put = (facts: EntityFacts) => out.set(nodeKey(facts.type, facts.id), facts);
  for (const [type, ids] of byType) {
    for (const part of chunks(ids)) {
      for (const facts of await factsOf(db, organizationId, type, part)) put(facts);
    }
  }
  return out;
}

/** Every entity of the organization of the given types (topics have no rows: none). */
export async function allEntities(
  db: Kysely<Database>,
  organizationId: string,
  types: readonly EntityType[],
): Promise<EntityFacts[]> {
  const out: EntityFacts[] = [];
  for (const type of types) out.push(...(await factsOf(db, organizationId, type, null)));
  return out;
}

async function factsOf(
  db: Kysely<Database>,
  organizationId: string,
  type: EntityType,
  ids: string[] | null,
): Promise<EntityFacts[]> {
  switch (type) {
    case 'connection': {
      let q = db
        .selectFrom('connections')
        .select(['id', 'name', 'desired_state'])
        .where('organization_id', '=', organizationId);
      if (ids) q = q.where('id', 'in', ids);
      return (await q.execute()).map((r) => ({
        type,
        id: r.id,
        name: r.name,
        status: r.desired_state,
        active: true,
      }));
    }
    case 'function': {
      let q = db
        .selectFrom('connection_functions')
        .select(['id', 'name', 'connection_id'])
        .where('organization_id', '=', organizationId);
      if (ids) q = q.where('id', 'in', ids);
      return (await q.execute()).map((r) => ({
        type,
        id: r.id,
        name: r.name,
        status: null,
        active: true,
        connectionId: r.connection_id,
      }));
    }
    case 'model': {
      let q = db.selectFrom('models').select(['id', 'name']).where('organization_id', '=', organizationId);
      if (ids) q = q.where('id', 'in', ids);
      return (await q.execute()).map((r) => ({ type, id: r.id, name: r.name, status: null, active: true }));
    }
    case 'pipeline': {
      let q = db
        .selectFrom('pipelines')
        .select(['id', 'name', 'enabled'])
        .where('organization_id', '=', organizationId);
      if (ids) q = q.where('id', 'in', ids);
      return (await q.execute()).map((r) => {
        const enabled = Number(r.enabled) === 1;
        return { type, id: r.id, name: r.name, status: enabled ? 'enabled' : 'disabled', active: enabled };
      });
    }
    case 'dashboard': {
      let q = db
        .selectFrom('dashboards')
        .select(['id', 'title'])
        .where('organization_id', '=', organizationId);
      if (ids) q = q.where('id', 'in', ids);
      return (await q.execute()).map((r) => ({ type, id: r.id, name: r.title, status: null, active: true }));
    }
    case 'folder': {
      let q = db
        .selectFrom('dashboard_folders')
        .select(['id', 'name'])
        .where('organization_id', '=', organizationId);
      if (ids) q = q.where('id', 'in', ids);
      return (await q.execute()).map((r) => ({ type, id: r.id, name: r.name, status: null, active: true }));
    }
    case 'topic':
      return [];
  }
}
