import type { Kysely } from 'kysely';
import type { Storage } from '../../storage/database.js';
import type { AuditLogTable, Database } from '../../storage/tables.js';

/** Writes a batch of audit rows; resolves when they are committed. */
export interface AuditWriter {
  write(rows: AuditLogTable[]): Promise<void>;
  close(): Promise<void>;
}

/**
 * The audit writer: batches go through the storage's own connection. On SQLite a second connection (a
 * worker thread) would be a second writer, and better-sqlite3 waits for the file lock synchronously,
 * stalling the event loop for up to the busy timeout under load (seen in the soak: 503s and MQTT stalls).
 */
export function createAuditWriter(storage: Storage): AuditWriter {
  return queryBuilderWriter(storage.db);
}

function queryBuilderWriter(db: Kysely<Database>): AuditWriter {
  return {
    async write(rows) {
      if (rows.length > 0) await db.insertInto('audit_log').values(rows).execute();
    },
    async close() {},
  };
}
