import { type Kysely, PostgresAdapter, type RawBuilder, sql } from 'kysely';

/**
 * Lists of values as one parameter, so that a statement's text does not change with the list's length.
 * Kysely writes `in (?, ?, …)` with a placeholder a value: every length is another statement, which
 * SQLite prepares (parses and plans) anew and PostgreSQL cannot keep prepared. Here a list is one
 * parameter: a JSON array read with `json_each` on SQLite, an array on PostgreSQL.
 */

/** Whether `db` speaks PostgreSQL rather than SQLite. */
// biome-ignore lint/suspicious/noExplicitAny: any database's query builder.
export const isPostgres = (db: Kysely<any>): boolean => db.getExecutor().adapter instanceof PostgresAdapter;

/** `<column> in <values>` with the list as one text array parameter. */
// biome-ignore lint/suspicious/noExplicitAny: any database's query builder.
export function inTextList(db: Kysely<any>, column: string, values: readonly string[]): RawBuilder<boolean> {
  return isPostgres(db)
    ? sql<boolean>`${sql.ref(column)} = any(${values}::text[])`
    : sql<boolean>`${sql.ref(column)} in (select value from json_each(${JSON.stringify(values)}))`;
}

/**
 * A table `(id text, n bigint)` of pairs, as one parameter (two on PostgreSQL): to update rows each with
 * its own number in one statement of fixed text (`update … from <pairs> as v where t.id = v.id`).
 */
export function textNumberPairs(
  // biome-ignore lint/suspicious/noExplicitAny: any database's query builder.
  db: Kysely<any>,
  pairs: readonly (readonly [string, number])[],
): RawBuilder<unknown> {
  return isPostgres(db)
    ? sql`(select * from unnest(${pairs.map((p) => p[0])}::text[], ${pairs.map((p) => p[1])}::bigint[]) as u(id, n))`
    : sql`(select value ->> 0 as id, value ->> 1 as n from json_each(${JSON.stringify(pairs)}))`;
}

/**
 * Rows in slices whose lengths are powers of two (at most `largest`), largest first: a multi-row insert
 * has a statement text per row count, so slicing any number of rows this way makes a few texts that stay
 * prepared instead of one new text (parsed and planned again on SQLite) for each count.
 */
export function powerOfTwoSlices<T>(rows: readonly T[], largest = 256): T[][] {
  const slices: T[][] = [];
  let size = largest;
  for (let i = 0; i < rows.length; ) {
    while (size > rows.length - i) size /= 2;
    slices.push(rows.slice(i, i + size));
    i += size;
  }
  return slices;
}
