import { CompiledQuery, sql } from 'kysely';
import type { Storage } from '../../storage/database.js';
import type { AuditLogTable } from '../../storage/tables.js';

/** Writes a batch of audit rows; resolves when they are committed. */
export interface AuditWriter {
  write(rows: AuditLogTable[]): Promise<void>;
  close(): Promise<void>;
}

const COLUMNS = [
  'id',
  'at',
  'organization_id',
  'actor_user_id',
  'actor_client_id',
  'action',
  'target_type',
  'target_id',
  'details',
  'request_id',
] as const satisfies readonly (keyof AuditLogTable)[];
const PG_TYPES = ['text', 'bigint', 'text', 'text', 'text', 'text', 'text', 'text', 'text', 'text'];

// One statement text whatever the batch size, so it is parsed and planned once (SQLite's statement
// cache, PostgreSQL's plan): a multi-row VALUES list was a new statement for every batch size, and
// building it cost a tenth of the token endpoint's time.
const SQLITE_INSERT = `insert into audit_log (${COLUMNS.join(', ')}) values (${COLUMNS.map(() => '?').join(', ')})`;
const PG_INSERT =
  `insert into audit_log (${COLUMNS.join(', ')}) ` +
  `select * from unnest(${PG_TYPES.map((type, i) => `$${i + 1}::${type}[]`).join(', ')})`;

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
            await connection.transaction().execute(async (trx) => {
              for (const row of rows) {
                await trx.executeQuery(
                  CompiledQuery.raw(
                    SQLITE_INSERT,
                    COLUMNS.map((column) => row[column]),
                  ),
                );
              }
            });
          } finally {
            await sql`PRAGMA synchronous = FULL`.execute(connection);
          }
        });
        return;
      }
      await db.transaction().execute(async (trx) => {
        await sql`SET LOCAL synchronous_commit = off`.execute(trx);
        await trx.executeQuery(
          CompiledQuery.raw(
            PG_INSERT,
            COLUMNS.map((column) => rows.map((row) => row[column])),
          ),
        );
      });
    },
    async close() {},
  };
}
