import { type SelectQueryBuilder, sql } from 'kysely';
import type { Database } from '../../../storage/tables.js';
import type { EntityTable, Extracted } from './entity-kinds.js';

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
