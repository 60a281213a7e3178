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
 * The number each id has in `numbers`, as an expression of the row's `id` column: to update rows named
 * by id (`where id in …`, inTextList) each with its own number, in one statement of fixed text and
 * without a join. The numbers are one JSON object parameter, read by key (jsonb's keys are sorted: a
 * binary search). A join with a table of pairs (`update … from unnest(…) as v where t.id = v.id`) was
 * planned on PostgreSQL, before the table had statistics, as a nested loop scanning the pairs once a row:
 * 70 ms for 446 rows.
 */
export function numberById(
  // biome-ignore lint/suspicious/noExplicitAny: any database's query builder.
  db: Kysely<any>,
  numbers: ReadonlyMap<string, number>,
): RawBuilder<number> {
  const json = JSON.stringify(Object.fromEntries(numbers));
  return isPostgres(db)
    ? sql<number>`(${json}::jsonb ->> id)::bigint`
    : sql<number>`json_extract(${json}, '$."' || id || '"')`;
}

/**
 * PostgreSQL: inserts `rows` into `table` with one JSON array parameter a column, each read in the select
 * list (`insert into t (a, b) select json_array_elements_text($1::json)::text, …`), the arrays read in
 * step. One statement of fixed text whatever the number of rows, planned in no time: a multi-row VALUES
 * list of 256 rows (a parameter a value) cost PostgreSQL ~26 µs a row against ~18 with one array literal a
 * column (the form before the JSON arrays), and its 5,000-odd parameters as many conversions here.
 * `types` gives each column's SQL type; `suffix` follows the select (an `on conflict` clause).
 */
export function insertAsArrays<Row extends object>(
  // biome-ignore lint/suspicious/noExplicitAny: any database's query builder.
  db: Kysely<any>,
  table: string,
  types: { readonly [C in keyof Row]: string },
  rows: readonly Row[],
  suffix: RawBuilder<unknown> = sql``,
): Promise<unknown> {
  const columns = Object.keys(types) as (keyof Row & string)[];
  // Each column's values as a JSON array, read in step with json_array_elements_text: written by
  // JSON.stringify, where node-postgres writes an array parameter's literal in JavaScript, two regular
  // expressions over each value (every quote of a JSON text escaped): in the pipeline bench on
  // PostgreSQL, ~1.2 s of the event loop's ~18 busy seconds.
  const arrays = columns.map(
    (column) =>
      sql`json_array_elements_text(${JSON.stringify(rows.map((row) => wellFormed(row[column])))}::json)::${sql.raw(types[column])}`,
  );
  return sql`insert into ${sql.table(table)} (${sql.join(columns.map((c) => sql.ref(c)))}) select ${sql.join(arrays)} ${suffix}`.execute(
    db,
  );
}

/**
 * A value as insertAsArrays' JSON arrays carry it: null for undefined, and a string with a lone surrogate
 * with U+FFFD in its place, as node-postgres sends it (as UTF-8), where PostgreSQL's JSON refuses the
 * escape JSON.stringify writes for it.
 */
function wellFormed(value: unknown): unknown {
  if (value === undefined) return null;
  // ES2024's String methods (Node.js 20 and up); TypeScript's lib here is ES2023.
  const text = value as { isWellFormed(): boolean; toWellFormed(): string };
  return typeof value === 'string' && !text.isWellFormed() ? text.toWellFormed() : value;
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
