import { randomUUID } from 'node:crypto';
import { type Kysely, sql } from 'kysely';
import type { MeridianMigration } from '../migrator.js';

// biome-ignore lint/suspicious/noExplicitAny: migrations run against the schema as it was
type Db = Kysely<any>;

const REASON = 'names are unique ignoring case (migration 0028); this one was renamed to keep it';

/** One table whose names become unique ignoring case within a scope. */
interface Scoped {
  table: string;
  index: string;
  name: 'name' | 'title';
  /** The scope columns; a NULL one (a dashboard at the top) is indexed as ''. */
  scope: string[];
  /** The audit log's target type, and the target and path of a renamed row's entry. */
  audit(row: Record<string, string>): { targetType: string; targetId: string; path: string; action: string };
}

const TABLES: Scoped[] = [
  {
    table: 'connections',
    index: 'connections_name_ci_uq',
    name: 'name',
    scope: ['organization_id'],
    audit: (r) => ({
      targetType: 'connection',
      targetId: r.id!,
      path: '/name',
      action: 'connection.renamed',
    }),
  },
  {
    table: 'connection_functions',
    index: 'connection_functions_name_ci_uq',
    name: 'name',
    scope: ['connection_id'],
    audit: (r) => ({
      targetType: 'connection',
      targetId: r.connection_id!,
      path: `/functions/${r.id}/name`,
      action: 'connection.function_renamed',
    }),
  },
  {
    table: 'dashboards',
    index: 'dashboards_title_ci_uq',
    name: 'title',
    scope: ['organization_id', 'folder_id'],
    audit: (r) => ({ targetType: 'dashboard', targetId: r.id!, path: '/title', action: 'dashboard.renamed' }),
  },
  {
    table: 'dashboard_folders',
    index: 'dashboard_folders_name_ci_uq',
    name: 'name',
    scope: ['organization_id', 'parent_key'],
    audit: (r) => ({
      targetType: 'dashboard_folder',
      targetId: r.id!,
      path: '/name',
      action: 'dashboard_folder.renamed',
    }),
  },
];

/** `name (2)`, `name (3)` ... the first whose lower case is not in `taken`, within 100 characters. */
function freeName(name: string, taken: Set<string>): string {
  for (let n = 2; ; n++) {
    const suffix = ` (${n})`;
    const candidate = `${name.slice(0, 100 - suffix.length)}${suffix}`;
    if (!taken.has(candidate.toLowerCase())) return candidate;
  }
}

/**
 * Renames every row whose name another row of its scope made earlier already has ignoring case (the
 * oldest keeps its name, the others get ` (2)`, ` (3)` ...), each rename recorded in the audit log.
 */
async function renameDuplicates(db: Db, t: Scoped): Promise<void> {
  const name = sql.ref(t.name);
  const columns = [...new Set(['id', 'organization_id', ...t.scope])].map((c) => sql.ref(c));
  const rows = (
    await sql<Record<string, string>>`select ${sql.join(columns)}, ${name} as name, lower(${name}) as name_key
      from ${sql.table(t.table)} order by created_at, id`.execute(db)
  ).rows;
  const seen = new Map<string, Set<string>>();
  const duplicates: Record<string, string>[] = [];
  for (const row of rows) {
    const scope = t.scope.map((c) => row[c] ?? '').join('\u0000');
    let names = seen.get(scope);
    if (!names) {
      names = new Set();
      seen.set(scope, names);
    }
    if (names.has(row.name_key!)) duplicates.push({ ...row, scope });
    else names.add(row.name_key!).add(row.name!.toLowerCase());
  }
  for (const row of duplicates) {
    const names = seen.get(row.scope!)!;
    const renamed = freeName(row.name!, names);
    names.add(renamed.toLowerCase());
    await sql`update ${sql.table(t.table)} set ${name} = ${renamed} where id = ${row.id}`.execute(db);
    const audit = t.audit(row);
    await db
      .insertInto('audit_log')
      .values({
        id: randomUUID(),
        at: Date.now(),
        organization_id: row.organization_id,
        actor_user_id: null,
        actor_client_id: null,
        action: audit.action,
        target_type: audit.targetType,
        target_id: audit.targetId,
        details: JSON.stringify({
          reason: REASON,
          changes: [{ path: audit.path, from: row.name, to: renamed }],
        }),
        request_id: null,
      })
      .execute();
  }
}

/**
 * Names unique ignoring case (DESIGN: "names are unique per organization and type, case-insensitive"):
 * connections in their organization, functions in their connection, dashboards in their folder,
 * folders among their siblings. A unique index on `lower(name)` per scope holds the rule under
 * concurrent creates on either database (models and pipelines have had theirs on `name_key` since
 * 0008 and 0011). Rows that break it already are renamed first, the oldest keeping its name.
 * Both databases fold case with their own `lower()` (SQLite: ASCII letters only).
 */
export const namesIgnoreCase: MeridianMigration = {
  name: '0028-names-ignore-case',
  async up(db) {
    for (const t of TABLES) {
      await renameDuplicates(db, t);
      const scope = t.scope.map((c) => (c === 'folder_id' ? sql`coalesce(folder_id, '')` : sql.ref(c)));
      await sql`create unique index ${sql.ref(t.index)} on ${sql.table(t.table)} (${sql.join(scope)}, lower(${sql.ref(t.name)}))`.execute(
        db,
      );
    }
  },
};
