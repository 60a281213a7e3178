import { type Kysely, type SelectQueryBuilder, sql } from 'kysely';
import type { Database } from '../../../storage/tables.js';
import { type DependencyGraph, type NodeKey, nodeKey } from '../edges/dependency-graph.js';
import type { EdgeOwner, EntityFacts, EntityKind, EntityTable, Extracted } from './entity-kinds.js';

/**
 * Helpers for kinds reading their own rows. `query` selects from the kind's table; the organization
 * (and `ids`, unless null) narrow it: what `EntityKind.facts` answers for.
 */
export function entityRows<T extends EntityTable, O>(
  query: SelectQueryBuilder<Database, T, O>,
  organizationId: string,
  ids: readonly string[] | null,
): Promise<O[]> {
  let q = query.where(sql.ref('organization_id'), '=', organizationId);
  if (ids) q = q.where(sql.ref('id'), 'in', ids);
  return q.execute();
}

/** The extracted references of owner rows, by id (`EdgeOwner.extract`). */
export function extractedById<R extends { id: string }>(
  rows: readonly R[],
  extract: (row: R) => Extracted,
): Map<string, Extracted> {
  return new Map(rows.map((row) => [row.id, extract(row)]));
}

/** Rows sorted by name, as export lists them. */
export const byName = <R extends { name: string }>(rows: R[]): R[] =>
  rows.sort((a, b) => a.name.localeCompare(b.name));

/** The facts of rows that have no state of their own (each active, no status). */
export const plainFacts = (type: string, rows: readonly { id: string; name: string }[]): EntityFacts[] =>
  rows.map((r) => ({ type, id: r.id, name: r.name, status: null, active: true }));

/** An `EntityKind.unused` listing the entities `isUnused` picks (given the graph and each one's node key), all for `reason`. */
export function unusedWhen(
  reason: string,
  isUnused: (graph: DependencyGraph, key: NodeKey, entity: EntityFacts) => boolean,
): NonNullable<EntityKind['unused']> {
  return async ({ graph, entities }) =>
    entities.filter((e) => isUnused(graph, nodeKey(e.type, e.id), e)).map((e) => ({ id: e.id, reason }));
}

/**
 * An edge owner whose rows `read` answers (one query for many ids, each row with its organization):
 * `extract` tells a row's references, and where they go from (default: the owner's own node) and
 * whether it is active (default: yes).
 */
export function edgeOwner<R extends { id: string; organization_id: string }>(
  ownerType: string,
  table: EdgeOwner['table'],
  read: (trx: Kysely<Database>, ids: string[]) => Promise<R[]>,
  extract: (row: R) => Pick<Extracted, 'references'> & Partial<Pick<Extracted, 'from' | 'active'>>,
  extra: Pick<EdgeOwner, 'parts' | 'refuseMissing'> = {},
): EdgeOwner {
  return {
    ownerType,
    table,
    ...extra,
    async extract(trx, ids) {
      return extractedById(await read(trx, ids), (row) => ({
        organizationId: row.organization_id,
        from: { type: ownerType, id: row.id },
        active: true,
        ...extract(row),
      }));
    },
  };
}
