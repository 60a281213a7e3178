import {
  type Compilable,
  DummyDriver,
  Kysely,
  SqliteAdapter,
  SqliteIntrospector,
  SqliteQueryCompiler,
} from 'kysely';
import type { StatementTemplate } from './sqlite/sqlite-thread-serve.js';
import type { Database } from './tables.js';

/**
 * Statements written once with the query builder, for the Kysely path and for a SQLite thread alike: the
 * thread is sent each as a template (its text as Kysely compiles it for SQLite, its slots named), which
 * it prepares with prepareTemplate (sqlite-thread-serve.ts).
 */

/** A query builder that only compiles, for SQLite: it has no connection. */
export const sqliteCompiler = new Kysely<Database>({
  dialect: {
    createAdapter: () => new SqliteAdapter(),
    createDriver: () => new DummyDriver(),
    createIntrospector: (db) => new SqliteIntrospector(db),
    createQueryCompiler: () => new SqliteQueryCompiler(),
  },
});

const SLOT = Symbol('slot');

/**
 * A value standing for the named slot while a statement is built for a template (its type is the
 * value's that will fill it, for the builder's sake).
 */
export function slot<T>(name: string): T {
  return { [SLOT]: name } as T;
}

/** The template of `query`, built with sqliteCompiler and slot() in the places of the runner's values. */
export function statementTemplate(query: Compilable): StatementTemplate {
  const { sql, parameters } = query.compile();
  return {
    sql,
    parameters: parameters.map((p) => {
      const name = p !== null && typeof p === 'object' ? (p as { [SLOT]?: string })[SLOT] : undefined;
      return name === undefined ? { value: p } : { slot: name };
    }),
  };
}
