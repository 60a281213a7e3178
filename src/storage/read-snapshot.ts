import { type Kysely, sql } from 'kysely';
import { isPostgres } from './value-lists.js';

/**
 * Runs `read`'s statements in one read-only snapshot of the database: for a read whose statements must
 * agree with each other while other connections commit between them (a compaction or a late merge moving
 * values from rows into a segment). On PostgreSQL a REPEATABLE READ transaction; on SQLite a deferred
 * transaction, whose first read fixes the snapshot of the WAL and which takes no write lock. The
 * connection is held throughout (on SQLite, the one connection: other statements wait for the read).
 */
export function inReadSnapshot<DB, T>(db: Kysely<DB>, read: (db: Kysely<DB>) => Promise<T>): Promise<T> {
  const begin = isPostgres(db) ? 'begin isolation level repeatable read read only' : 'begin deferred';
  return db.connection().execute(async (held) => {
    await sql.raw(begin).execute(held);
    let result: T;
    try {
      result = await read(held);
    } catch (error) {
      // The read's error is the one to tell, whether or not the rollback goes through.
      await sql
        .raw('rollback')
        .execute(held)
        .catch(() => {});
      throw error;
    }
    await sql.raw('commit').execute(held);
    return result;
  });
}
