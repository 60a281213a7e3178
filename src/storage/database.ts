import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import SQLite from 'better-sqlite3';
import { Kysely, PostgresDialect, SqliteDialect, sql } from 'kysely';
import pg from 'pg';
import { classifyDriverError } from './driver-errors.js';
import type { Database } from './tables.js';

export type DialectName = 'sqlite' | 'postgres';

/** An open storage: the query builder, which dialect it speaks, and how to check and close it. */
export interface Storage {
  db: Kysely<Database>;
  dialect: DialectName;
  /** Where the data lives, without credentials (for logs and the settings API). */
  location: string;
  /** Resolves when the database answers a trivial query. */
  ping(): Promise<void>;
  close(): Promise<void>;
}

export interface StorageOptions {
  databaseUrl?: string | undefined;
  dataDir: string;
  poolSize?: number;
  /** SQLite file name inside the data dir; `:memory:` for a throwaway database. */
  sqliteFile?: string;
}

/** Opens SQLite in the data directory, or PostgreSQL when a database URL is given. */
export function openStorage(options: StorageOptions): Storage {
  return options.databaseUrl
    ? openPostgres(options.databaseUrl, options.poolSize ?? 10)
    : openSqlite(options);
}

function openSqlite(options: StorageOptions): Storage {
  const file = options.sqliteFile ?? 'meridian.db';
  let path = file;
  if (file !== ':memory:') {
    mkdirSync(options.dataDir, { recursive: true });
    path = join(options.dataDir, file);
  }
  let connection: SQLite.Database;
  try {
    connection = new SQLite(path);
    connection.pragma('journal_mode = WAL');
  } catch (error) {
    const kind = classifyDriverError(error);
    if (kind === 'read_only' || kind === 'unavailable' || kind === 'storage_full') {
      throw new Error(
        `cannot open the SQLite database ${path} for writing (${(error as Error).message}): ` +
          'check that MERIDIAN_DATA_DIR is on a writable filesystem with free space',
      );
    }
    throw error;
  }
  // FULL: a committed transaction survives power loss, not only a process crash (DESIGN: a 200 means committed).
  connection.pragma('synchronous = FULL');
  connection.pragma('foreign_keys = ON');
  connection.pragma('busy_timeout = 5000');
  const db = new Kysely<Database>({ dialect: new SqliteDialect({ database: connection }) });
  return {
    db,
    dialect: 'sqlite',
    location: path,
    async ping() {
      connection.prepare('SELECT 1').get();
    },
    async close() {
      await db.destroy();
    },
  };
}

// BIGINT (int8) and NUMERIC come back as strings by default; our BIGINTs are epoch milliseconds and
// counters, all well inside Number.MAX_SAFE_INTEGER.
const INT8_OID = 20;
const pgTypes = {
  getTypeParser(oid: number, format?: 'text' | 'binary') {
    if (oid === INT8_OID) return (value: string) => Number(value);
    return pg.types.getTypeParser(oid, format);
  },
};

function openPostgres(databaseUrl: string, poolSize: number): Storage {
  const pool = new pg.Pool({
    connectionString: databaseUrl,
    max: poolSize,
    types: pgTypes as pg.CustomTypesConfig,
    connectionTimeoutMillis: 5000,
    application_name: 'meridian',
  });
  // A client that loses its connection (server restart) emits 'error': idle ones through the pool, checked-out
  // ones on themselves. Without listeners the process would crash; the query in flight still rejects.
  pool.on('error', () => {});
  pool.on('connect', (client) => client.on('error', () => {}));
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
  const url = new URL(databaseUrl);
  return {
    db,
    dialect: 'postgres',
    location: `postgres://${url.hostname}:${url.port || 5432}${url.pathname}`,
    async ping() {
      await sql`SELECT 1`.execute(db);
    },
    async close() {
      await db.destroy();
    },
  };
}
