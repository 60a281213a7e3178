import { type FileHandle, open } from 'node:fs/promises';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import SQLite from 'better-sqlite3';
import { Kysely, PostgresDialect, sql } from 'kysely';
import pg from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import { classifyDriverError } from './driver-errors.js';
import type { DurableWrite } from './durable-write.js';
import { ensurePrivateDatabaseFile, ensurePrivateDirectory } from './private-files.js';
import { SharedSqliteDialect } from './sqlite/sqlite-driver.js';
import { EVENT_LOOP_AUTOCHECKPOINT_PAGES, startWalCheckpoints } from './sqlite/wal-checkpoints.js';
import type { Database } from './tables.js';

export type DialectName = 'sqlite' | 'postgres';

/** A named prepared statement and its parameters (PostgreSQL). */
export interface PreparedStatement {
  name: string;
  text: string;
  values: unknown[];
}

/** An open storage: the query builder, which dialect it speaks, and how to check and close it. */
export interface Storage {
  db: Kysely<Database>;
  dialect: DialectName;
  /** Where the data lives, without credentials (for logs and the settings API). */
  location: string;
  /** Resolves when the database answers a trivial query. */
  ping(): Promise<void>;
  /**
   * Runs a write (usually one transaction) and resolves once it is durable, like any commit, but without
   * blocking the event loop on the disk flush: on SQLite the transaction commits with `synchronous =
   * NORMAL` and the WAL files are then fsynced on libuv's thread pool before this resolves; PostgreSQL
   * commits asynchronously anyway. For the hot write paths (the historian).
   */
  durableWrite: DurableWrite;
  /**
   * SQLite only (absent on PostgreSQL): the one connection's prepared statement for `text`, prepared once
   * and cached. For hot write paths inside `durableWrite` (which holds the connection, so the statement
   * runs in its transaction): one `run` a row instead of a query built, compiled and awaited a row.
   */
  sqliteStatement?: (text: string) => SQLite.Statement;
  /**
   * PostgreSQL only (absent on SQLite): runs one named prepared statement on a pooled connection in
   * autocommit, so the statement is its own transaction (all or nothing) and has committed durably when
   * this resolves. PostgreSQL parses and plans it once per connection instead of once per call. `name`
   * must always come with the same `text`. For hot single-statement writes (the historian).
   */
  pgPrepared?: (name: string, text: string, values: unknown[]) => Promise<void>;
  /**
   * PostgreSQL only (absent on SQLite): one transaction on a pooled connection that copies `rows` (COPY
   * text format: a line a row, columns separated by tabs) with `copy` (`COPY <table> (<columns>) FROM
   * STDIN`), then runs the named prepared statement `then`, and commits: committed durably when this
   * resolves; on any error rolled back, nothing stored, and the error thrown as the server sent it (a
   * copied row meeting a stored key: unique_violation). For bulk writes on a hot path (the historian's
   * large commits); COPY reads rows at about two thirds of the server's cost of an insert.
   */
  pgCopy?: (copy: string, rows: Buffer, then: PreparedStatement) => Promise<void>;
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
    ensurePrivateDirectory(options.dataDir);
    path = join(options.dataDir, file);
  }
  let connection: SQLite.Database;
  try {
    if (file !== ':memory:') ensurePrivateDatabaseFile(path);
    connection = new SQLite(path);
    connection.pragma('journal_mode = WAL');
  } catch (error) {
    const kind = classifyDriverError(error);
    const fsCode = (error as NodeJS.ErrnoException).code;
    const unwritable = fsCode === 'EROFS' || fsCode === 'EACCES' || fsCode === 'EPERM' || fsCode === 'ENOSPC';
    if (unwritable || kind === 'read_only' || kind === 'unavailable' || kind === 'storage_full') {
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
  // Waits for another writer's lock happen on timers, never in SQLite's busy handler (sqlite-driver.ts).
  connection.pragma('busy_timeout = 0');
  // Checkpoints run on a thread of their own (wal-checkpoints.ts); this connection's only as a safety net.
  const checkpoints = file === ':memory:' ? undefined : startWalCheckpoints(path);
  if (checkpoints) connection.pragma(`wal_autocheckpoint = ${EVENT_LOOP_AUTOCHECKPOINT_PAGES}`);
  const statements = withStatementCache(connection);
  const db = new Kysely<Database>({ dialect: new SharedSqliteDialect({ database: statements }, connection) });
  const wal = new WalSync();
  const setSynchronous = (schemas: readonly { name: string }[], mode: 'NORMAL' | 'FULL') => {
    for (const s of schemas) statements.prepare(`pragma "${s.name}".synchronous = ${mode}`).run();
  };
  return {
    db,
    dialect: 'sqlite',
    location: path,
    async ping() {
      connection.prepare('SELECT 1').get();
    },
    async durableWrite(work) {
      // The connection is held throughout, so no other commit runs while the setting is relaxed.
      // The pragmas run on the driver directly (cached statements): they cost more through the builder.
      const { result, files } = await db.connection().execute(async (held) => {
        const schemas = (
          statements.prepare('pragma database_list').all() as { name: string; file: string }[]
        ).filter((row) => row.file !== '');
        setSynchronous(schemas, 'NORMAL');
        try {
          return { result: await work(held), files: schemas.map((s) => `${s.file}-wal`) };
        } finally {
          setSynchronous(schemas, 'FULL');
        }
      });
      await wal.sync(files);
      return result;
    },
    sqliteStatement: (text) => statements.prepare(text),
    async close() {
      await checkpoints?.close();
      await db.destroy();
      await wal.close();
    },
  };
}

/**
 * fsync of SQLite's WAL files off the event loop. A commit with `synchronous = NORMAL` has written its
 * frames to the WAL (so a process crash loses nothing); syncing the WAL file afterwards makes it as durable
 * as a FULL commit. SQLite keeps a WAL file (the same inode, reset or truncated, never replaced) for as
 * long as a connection is open, so its handle is opened once; a missing file (never written) needs no sync.
 */
class WalSync {
  private readonly handles = new Map<string, Promise<FileHandle | null>>();

  async sync(files: readonly string[]): Promise<void> {
    await Promise.all(
      files.map(async (file) => {
        const handle = await this.handleOf(file);
        try {
          await handle?.sync();
        } catch (error) {
          this.handles.delete(file);
          await handle?.close().catch(() => {});
          throw error;
        }
      }),
    );
  }

  private handleOf(file: string): Promise<FileHandle | null> {
    let handle = this.handles.get(file);
    if (!handle) {
      handle = open(file, 'r').catch((error: NodeJS.ErrnoException) => {
        this.handles.delete(file);
        if (error.code === 'ENOENT') return null;
        throw error;
      });
      this.handles.set(file, handle);
    }
    return handle;
  }

  async close(): Promise<void> {
    const handles = await Promise.all(this.handles.values());
    this.handles.clear();
    await Promise.all(handles.map((h) => h?.close()));
  }
}

export const STATEMENT_CACHE_SIZE = 256;

/**
 * Kysely prepares every query anew; SQLite's prepare (parse and plan) costs more than running a point
 * query. The connection is wrapped so that the same SQL text reuses its prepared statement (at most
 * STATEMENT_CACHE_SIZE kept, the least recently used dropped first: SQL with variable IN lists would
 * otherwise grow it without bound). A statement still being iterated by a stream is busy; such a query
 * gets a fresh statement.
 *
 * Recency is a use counter on each entry, not the Map's order: moving the entry to the end on every use
 * (a delete and a set) made the Map rebuild its table every few hundred queries, and in a soak those
 * tables were a tenth of what reached the old generation. Dropping one scans the entries, only when a new
 * text arrives at a full cache.
 */
export function withStatementCache(connection: Pick<SQLite.Database, 'prepare' | 'close'>) {
  const cache = new Map<string, { statement: SQLite.Statement; used: number }>();
  let uses = 0;
  return {
    close: () => connection.close(),
    prepare(text: string) {
      const cached = cache.get(text);
      if (cached && !cached.statement.busy) {
        cached.used = ++uses;
        return cached.statement;
      }
      const statement = connection.prepare(text);
      if (!cached) {
        cache.set(text, { statement, used: ++uses });
        if (cache.size > STATEMENT_CACHE_SIZE) {
          let oldest: string | undefined;
          let oldestUse = Number.POSITIVE_INFINITY;
          for (const [key, entry] of cache)
            if (entry.used < oldestUse) {
              oldest = key;
              oldestUse = entry.used;
            }
          cache.delete(oldest!);
        }
      }
      return statement;
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

/**
 * Runs `work` on a connection of the pool and gives it back. pool.query would discard the connection
 * (and its prepared statements) on any error; one the server answered (a unique violation) leaves the
 * connection usable, so only other errors (a lost connection) discard it.
 */
async function onPooledClient(
  pool: pg.Pool,
  work: (client: pg.PoolClient) => Promise<unknown>,
): Promise<void> {
  const client = await pool.connect();
  let broken: Error | undefined;
  try {
    await work(client);
  } catch (error) {
    if (!(error instanceof pg.DatabaseError)) broken = error as Error;
    throw error;
  } finally {
    client.release(broken);
  }
}

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
    durableWrite: (work) => work(db),
    pgPrepared: (name, text, values) =>
      onPooledClient(pool, (client) => client.query({ name, text, values })),
    pgCopy: (copy, rows, then) =>
      onPooledClient(pool, async (client) => {
        await client.query('begin');
        try {
          await pipeline(Readable.from([rows]), client.query(copyFrom(copy)));
          await client.query(then);
          await client.query('commit');
        } catch (error) {
          await client.query('rollback');
          throw error;
        }
      }),
    async close() {
      await db.destroy();
    },
  };
}
