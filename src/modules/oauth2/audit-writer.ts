import { sql } from 'kysely';
import type { Storage } from '../../storage/database.js';
import type { AuditLogTable } from '../../storage/tables.js';

/** Writes a batch of audit rows; resolves when they are committed. */
export interface AuditWriter {
  write(rows: AuditLogTable[]): Promise<void>;
  close(): Promise<void>;
}

/**
 * The writer of token-issuance audit batches. Batches go through the storage's own connection: on SQLite
 * a second connection (a worker thread) would be a second writer, and better-sqlite3 waits for the file
 * lock synchronously, stalling the event loop under load (seen in the soak: 503s and MQTT stalls).
 *
 * These rows may be lost in a crash anyway (they are queued for up to 50 ms before the batch), so their
 * commit does not wait for the disk: on SQLite the batch runs with `synchronous = NORMAL` (the WAL is
 * written, and synced by the next FULL commit or checkpoint; a process crash loses nothing, a power loss
 * what was not synced), on PostgreSQL with `synchronous_commit = off`. Before this, the fsync of every
 * batch blocked SQLite's event loop for a fifth of the token endpoint's time. The connection is held for
 * the whole batch, so no other write commits while the setting is relaxed.
 */
export function createAuditWriter(storage: Storage): AuditWriter {
  const { db } = storage;
  return {
    async write(rows) {
      if (rows.length === 0) return;
      if (storage.dialect === 'sqlite') {
        await db.connection().execute(async (connection) => {
          await sql`PRAGMA synchronous = NORMAL`.execute(connection);
          try {
            await connection.insertInto('audit_log').values(rows).execute();
          } finally {
            await sql`PRAGMA synchronous = FULL`.execute(connection);
          }
        });
        return;
      }
      await db.transaction().execute(async (trx) => {
        await sql`SET LOCAL synchronous_commit = off`.execute(trx);
        await trx.insertInto('audit_log').values(rows).execute();
      });
    },
    async close() {},
  };
}
