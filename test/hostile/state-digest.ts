import { createHash } from 'node:crypto';
import { sql } from 'kysely';
import type { Storage } from '../../src/storage/database.js';

// Columns that change on a successful read (touch times), not on a write the test should see.
const VOLATILE = new Set(['last_seen_at', 'last_used_at', 'last_login_at']);
const SKIPPED_TABLES = new Set(['meridian_migrations', 'meridian_migrations_lock']);

/** A hash of every row of every table: equal before and after means nothing was stored or changed. */
export async function stateDigest(storage: Storage): Promise<string> {
  const tables =
    storage.dialect === 'sqlite'
      ? await sql<{
          name: string;
        }>`select name from sqlite_master where type = 'table' and name not like 'sqlite_%' order by name`.execute(
          storage.db,
        )
      : await sql<{
          name: string;
        }>`select tablename as name from pg_tables where schemaname = current_schema() order by tablename`.execute(
          storage.db,
        );
  const hash = createHash('sha256');
  for (const { name } of tables.rows) {
    if (SKIPPED_TABLES.has(name)) continue;
    const rows = await sql<Record<string, unknown>>`select * from ${sql.table(name)}`.execute(storage.db);
    const stable = rows.rows
      .map((row) =>
        JSON.stringify(
          Object.entries(row).filter(([column]) => !VOLATILE.has(column)),
          (_k, v) => (typeof v === 'bigint' ? String(v) : v),
        ),
      )
      .sort();
    hash.update(`${name}:${stable.length}\n${stable.join('\n')}\n`);
  }
  return hash.digest('hex');
}
