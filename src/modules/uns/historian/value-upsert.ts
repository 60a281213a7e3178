import { type Kysely, sql } from 'kysely';
import type { DialectName } from '../../../storage/database.js';
import type { Database, UnsValueTable } from '../../../storage/tables.js';

// Rows per statement: a whole batch in a few statements, without building a query tree per row.
const ROWS_PER_STATEMENT = 5000;

/**
 * Upserts value rows in bulk. The rows travel as one parameter: PostgreSQL arrays read with unnest,
 * SQLite a JSON array read with json_each; both are far cheaper than a bind parameter per column.
 * `uns_values`: the same topic and timestamp replaces the earlier record (idempotent retries).
 * `uns_latest`: replaces only when the declared timestamp is not older (backfill never wins).
 */
export async function upsertValues(
  db: Kysely<Database>,
  dialect: DialectName,
  table: 'uns_values' | 'uns_latest',
  rows: readonly UnsValueTable[],
): Promise<void> {
  const conflict =
    table === 'uns_values'
      ? sql`on conflict (topic_id, ts_us) do update set value_json = excluded.value_json,
          value_num = excluded.value_num, quality = excluded.quality, source = excluded.source,
          received_us = excluded.received_us`
      : sql`on conflict (topic_id) do update set ts_us = excluded.ts_us, value_json = excluded.value_json,
          value_num = excluded.value_num, quality = excluded.quality, source = excluded.source,
          received_us = excluded.received_us
          where uns_latest.ts_us <= excluded.ts_us`;
  for (let i = 0; i < rows.length; i += ROWS_PER_STATEMENT) {
    const part = rows.slice(i, i + ROWS_PER_STATEMENT);
    if (dialect === 'postgres') {
      await sql`insert into ${sql.table(table)} (topic_id, ts_us, value_json, value_num, quality, source, received_us)
        select * from unnest(${part.map((r) => r.topic_id)}::bigint[], ${part.map((r) => r.ts_us)}::bigint[],
          ${part.map((r) => r.value_json)}::text[], ${part.map((r) => r.value_num)}::float8[],
          ${part.map((r) => r.quality)}::smallint[], ${part.map((r) => r.source)}::text[],
          ${part.map((r) => r.received_us)}::bigint[])
        ${conflict}`.execute(db);
    } else {
      const json = JSON.stringify(
        part.map((r) => [r.topic_id, r.ts_us, r.value_json, r.value_num, r.quality, r.source, r.received_us]),
      );
      // `where true` keeps SQLite from reading ON CONFLICT as a join clause of the SELECT.
      await sql`insert into ${sql.table(table)} (topic_id, ts_us, value_json, value_num, quality, source, received_us)
        select j.value ->> 0, j.value ->> 1, j.value ->> 2, j.value ->> 3, j.value ->> 4, j.value ->> 5, j.value ->> 6
        from json_each(${json}) as j where true
        ${conflict}`.execute(db);
    }
  }
}
