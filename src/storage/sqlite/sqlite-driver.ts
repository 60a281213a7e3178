import type SQLite from 'better-sqlite3';
import {
  CompiledQuery,
  type DatabaseConnection,
  type Driver,
  type QueryResult,
  SqliteDialect,
  type SqliteDialectConfig,
  SqliteDriver,
} from 'kysely';

const BEGIN_IMMEDIATE = 'begin immediate';

/** How long a statement waits for another connection's write lock before it fails with SQLITE_BUSY. */
export const BUSY_WAIT_MS = 5000;

/**
 * Kysely's SQLite dialect for a connection that shares its files with a second writer (the historian
 * thread, see sqlite-historian-thread.ts), without ever waiting on the event loop.
 *
 * better-sqlite3 is synchronous: with a busy timeout, a statement that finds the write lock taken sleeps
 * in SQLite's busy handler and the whole event loop with it. Here the connection runs with
 * `busy_timeout = 0`, and a statement refused with SQLITE_BUSY is retried after a timer, so requests keep
 * being served meanwhile. Transactions begin IMMEDIATE, taking the write lock before their first
 * statement: a deferred transaction that read first could not take it later once the other writer had
 * committed (SQLITE_BUSY_SNAPSHOT). What is retried cannot have done anything: a statement outside a
 * transaction (it is its own transaction and was rolled back whole), `BEGIN IMMEDIATE`, and a statement
 * of a transaction begun IMMEDIATE that is still open after the refusal (SQLite undid that statement
 * alone; the transaction holds the write locks, so waiting cannot deadlock). The last happens: under
 * load, the first write into the attached historian file of a topic delete was refused once in about 25
 * runs of two replicas on one file, and went through 2 ms later; and a COMMIT into a file in rollback
 * mode waits for its readers. A deferred transaction (a read snapshot) is never retried.
 */
export class SharedSqliteDialect extends SqliteDialect {
  constructor(
    private readonly settings: SqliteDialectConfig,
    private readonly connection: Pick<SQLite.Database, 'inTransaction'>,
  ) {
    super(settings);
  }

  override createDriver(): Driver {
    return new SharedSqliteDriver(this.settings, this.connection);
  }
}

class SharedSqliteDriver extends SqliteDriver {
  private wrapped: RetryingConnection | undefined;

  constructor(
    settings: SqliteDialectConfig,
    private readonly connection: Pick<SQLite.Database, 'inTransaction'>,
  ) {
    super(settings);
  }

  override async acquireConnection(): Promise<DatabaseConnection> {
    const inner = await super.acquireConnection();
    // SQLite has one connection: its wrapper is made once.
    if (this.wrapped?.inner !== inner) this.wrapped = new RetryingConnection(inner, this.connection);
    return this.wrapped;
  }

  override async beginTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw(BEGIN_IMMEDIATE));
  }

  /**
   * Some errors (a full disk, SQLITE_FULL, at a statement or at the commit) make SQLite roll the
   * transaction back by itself; a ROLLBACK then fails ("no transaction is active") and its error would
   * take the place of the one that says what happened. So there is none to roll back then.
   */
  override async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    if (!this.connection.inTransaction) return;
    await super.rollbackTransaction(connection);
  }
}

class RetryingConnection implements DatabaseConnection {
  /** Whether the open transaction began IMMEDIATE (here, not by a raw statement on the driver). */
  private immediate = false;

  constructor(
    readonly inner: DatabaseConnection,
    private readonly connection: Pick<SQLite.Database, 'inTransaction'>,
  ) {}

  async executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    let deadline = 0;
    for (let attempt = 0; ; attempt++) {
      const inTransaction = this.connection.inTransaction;
      try {
        const result = await this.inner.executeQuery<R>(query);
        this.immediate = this.connection.inTransaction && (this.immediate || query.sql === BEGIN_IMMEDIATE);
        return result;
      } catch (error) {
        // A transaction SQLite rolled back by itself is not retried statement by statement in autocommit.
        const open = this.connection.inTransaction;
        const retry = isBusy(error) && (inTransaction ? open && this.immediate : !open);
        if (!open) this.immediate = false;
        if (!retry) throw error;
        const now = Date.now();
        if (deadline === 0) deadline = now + BUSY_WAIT_MS;
        if (now >= deadline) throw error;
        await pause(attempt);
      }
    }
  }

  streamQuery<R>(query: CompiledQuery, chunkSize?: number): AsyncIterableIterator<QueryResult<R>> {
    return this.inner.streamQuery<R>(query, chunkSize);
  }
}

function isBusy(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && code.startsWith('SQLITE_BUSY');
}

/** The next turn of the event loop first, then 1, 2, 4 … ms, at most 16 ms between attempts. */
function pause(attempt: number): Promise<void> {
  if (attempt === 0) return new Promise((resolve) => setImmediate(resolve));
  return new Promise((resolve) => setTimeout(resolve, Math.min(16, 2 ** (attempt - 1))));
}
