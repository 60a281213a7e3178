import type { Kysely } from 'kysely';
import type { Database } from './tables.js';

/** Tables of named, versioned entities of an organization (id, organization_id, name_key, version). */
export type VersionedTable = 'models' | 'pipelines';

/**
 * Saves `changes` to row `id` only while its stored version is `basedOn` (optimistic concurrency);
 * answers whether it did. Kysely cannot type a column set shared by a union of tables, hence the one cast.
 */
export async function updateAtVersion(
  trx: Kysely<Database>,
  table: VersionedTable,
  organizationId: string,
  id: string,
  changes: Record<string, unknown>,
  basedOn: number,
): Promise<boolean> {
  const result = await trx
    .updateTable(table as 'models')
    .set(changes)
    .where('organization_id', '=', organizationId)
    .where('id', '=', id)
    .where('version', '=', basedOn)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** Deletes row `id` of the organization; answers whether there was one. */
export async function deleteInOrganization(
  trx: Kysely<Database>,
  table: VersionedTable,
  organizationId: string,
  id: string,
): Promise<boolean> {
  const result = await trx
    .deleteFrom(table as 'models')
    .where('organization_id', '=', organizationId)
    .where('id', '=', id)
    .executeTakeFirst();
  return Number(result.numDeletedRows) === 1;
}

/** The other row of the organization (not `exceptId`) that has this name regardless of case, if any. */
export async function nameHolderInOrganization(
  db: Kysely<Database>,
  table: VersionedTable,
  organizationId: string,
  name: string,
  exceptId?: string,
): Promise<{ id: string; name: string } | undefined> {
  let query = db
    .selectFrom(table as 'models')
    .select(['id', 'name'])
    .where('organization_id', '=', organizationId)
    .where('name_key', '=', name.toLowerCase());
  if (exceptId) query = query.where('id', '!=', exceptId);
  return query.executeTakeFirst();
}

/** Whether another row of the organization (not `exceptId`) has this name, regardless of case. */
export async function nameTakenInOrganization(
  db: Kysely<Database>,
  table: VersionedTable,
  organizationId: string,
  name: string,
  exceptId?: string,
): Promise<boolean> {
  return (await nameHolderInOrganization(db, table, organizationId, name, exceptId)) !== undefined;
}
