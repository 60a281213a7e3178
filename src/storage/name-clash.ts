import { type Kysely, sql } from 'kysely';
import type { Database } from './tables.js';

/**
 * The configuration tables whose names are unique ignoring case within a scope (migration 0028 holds
 * the unique index on `lower(name)` of each; models and pipelines keep a `name_key` column instead).
 */
export const NAME_SCOPES = {
  connections: { name: 'name', scope: ['organization_id'] },
  connection_functions: { name: 'name', scope: ['connection_id'] },
  dashboards: { name: 'title', scope: ['organization_id', 'folder_id'] },
  dashboard_folders: { name: 'name', scope: ['organization_id', 'parent_key'] },
} as const;

export type NamedTable = keyof typeof NAME_SCOPES;

/** The row that holds a name already. */
export interface NameHolder {
  id: string;
  name: string;
}

/**
 * The row of `table` in `scope` (one value a scope column; null matches NULL) other than `exceptId`
 * whose name equals `name` ignoring case, as the database's `lower()` folds it (the unique index
 * folds the same way, so the friendly check and the index never disagree); undefined when free.
 */
export async function findNameHolder(
  db: Kysely<Database>,
  table: NamedTable,
  scope: Record<string, string | null>,
  name: string,
  exceptId?: string,
): Promise<NameHolder | undefined> {
  const column = sql.ref(NAME_SCOPES[table].name);
  const conditions = Object.entries(scope).map(([key, value]) =>
    value === null ? sql`${sql.ref(key)} is null` : sql`${sql.ref(key)} = ${value}`,
  );
  conditions.push(sql`lower(${column}) = lower(${name})`);
  if (exceptId !== undefined) conditions.push(sql`id <> ${exceptId}`);
  const result = await sql<NameHolder>`select id, ${column} as name from ${sql.table(table)} where ${sql.join(
    conditions,
    sql` and `,
  )} limit 1`.execute(db);
  return result.rows[0];
}

/**
 * `base` if it is free, else `base (2)`, `base (3)` ... the first that `taken` says is free, within
 * `maxLength` characters (the base is shortened to make room for the suffix).
 */
export async function firstFreeName(
  base: string,
  maxLength: number,
  taken: (name: string) => Promise<boolean>,
): Promise<string> {
  if (!(await taken(base))) return base;
  for (let n = 2; ; n++) {
    const suffix = ` (${n})`;
    const name = `${base.slice(0, maxLength - suffix.length)}${suffix}`;
    if (!(await taken(name))) return name;
  }
}
