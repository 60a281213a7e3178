import { CompiledQuery, sql } from 'kysely';
import type { Storage } from '../../../storage/database.js';
import { SqliteThread } from '../../../storage/sqlite/sqlite-thread.js';
import {
  AUDIT_COLUMNS,
  auditRowValues,
  ENTRY_WIDTH,
  type IssuanceEntry,
  issuanceAuditRow,
  pushEntryValues,
} from './issuance-audit-row.js';

/** Writes a batch of token issuance entries to the audit log; resolves when they are committed. */
export interface AuditWriter {
  write(entries: readonly IssuanceEntry[]): Promise<void>;
  close(): Promise<void>;
}

const PG_TYPES = ['text', 'bigint', 'text', 'text', 'text', 'text', 'text', 'text', 'text', 'text'];

// Fixed statement texts whatever the batch size, so each is parsed and planned once (SQLite's statement
// cache, PostgreSQL's plan): a multi-row VALUES list was a new statement for every batch size, and
// building it cost a tenth of the token endpoint's time.
const SQLITE_CHUNK = 50;
const sqliteInsert = (rows: number) =>
  `insert into audit_log (${AUDIT_COLUMNS.join(', ')}) values ` +
  Array.from({ length: rows }, () => `(${AUDIT_COLUMNS.map(() => '?').join(', ')})`).join(', ');
const SQLITE_INSERT_ONE = sqliteInsert(1);
const SQLITE_INSERT_CHUNK = sqliteInsert(SQLITE_CHUNK);
const PG_INSERT =
  `insert into audit_log (${AUDIT_COLUMNS.join(', ')}) ` +
  `select * from unnest(${PG_TYPES.map((type, i) => `$${i + 1}::${type}[]`).join(', ')})`;

// The thread waits for another writer's lock in SQLite's busy handler: it blocks only itself.
const AUDIT_THREAD_BUSY_TIMEOUT_MS = 10_000;

/**
 * The writer of token-issuance audit batches.
 *
 * On a SQLite file, batches are written by a thread of their own with its own connection (audit.worker.ts): the token
 * endpoint's event loop spent about a tenth of its time inside these inserts (about 7 µs a row) and the
 * WAL writes after them. A batch costs the event loop one message of the entries' fields (strings and numbers,
 * cheap to copy); the rows, their ids and JSON details are built on the thread.
 *
 * Elsewhere (PostgreSQL, an in-memory SQLite database) they go through the storage's own connection,
 * which waits for another writer's lock on timers, never in SQLite's busy handler
 * (storage/sqlite/sqlite-driver.ts).
 *
 * These rows may be lost in a crash anyway (they are queued for up to 50 ms before the batch), so their
 * commit does not wait for the disk: on SQLite the batch runs with `synchronous = NORMAL` (the WAL is
 * written, and synced by the next FULL commit or checkpoint; a process crash loses nothing, a power loss
 * what was not synced), on PostgreSQL with `synchronous_commit = off`. Before this, the fsync of every
 * batch blocked SQLite's event loop for a fifth of the token endpoint's time. On the storage's connection
 * the connection is held for the whole batch, so no other write commits while the setting is relaxed.
 */
export function createAuditWriter(storage: Storage): AuditWriter {
  if (storage.dialect === 'sqlite' && storage.location !== ':memory:')
    return threadAuditWriter(storage.location);
  return storageAuditWriter(storage);
}

function threadAuditWriter(file: string): AuditWriter {
  const thread = new SqliteThread<unknown[], number>(
    'audit thread',
    { name: 'audit', from: import.meta.url },
    {
      file,
      busyTimeoutMs: AUDIT_THREAD_BUSY_TIMEOUT_MS,
      width: AUDIT_COLUMNS.length,
      entryWidth: ENTRY_WIDTH,
      chunk: SQLITE_CHUNK,
      insertOne: SQLITE_INSERT_ONE,
      insertChunk: SQLITE_INSERT_CHUNK,
    },
  );
  return {
    async write(entries) {
      if (entries.length === 0) return;
      // The entries' fields only: the thread builds the rows (ids, JSON details) off the event loop.
      const values: unknown[] = [];
      for (const entry of entries) pushEntryValues(values, entry);
      await thread.request(values);
    },
    close: () => thread.close(),
  };
}

function storageAuditWriter(storage: Storage): AuditWriter {
  const { db } = storage;
  return {
    async write(entries) {
      if (entries.length === 0) return;
      const rows = entries.map(issuanceAuditRow);
      if (storage.dialect === 'sqlite') {
        await db.connection().execute(async (connection) => {
          await sql`PRAGMA synchronous = NORMAL`.execute(connection);
          try {
            await connection.transaction().execute(async (trx) => {
              // Whole chunks of 50 rows, then single rows: two statement texts, each prepared once.
              for (let start = 0; start < rows.length; ) {
                const size = rows.length - start >= SQLITE_CHUNK ? SQLITE_CHUNK : 1;
                const values: unknown[] = [];
                for (let i = start; i < start + size; i++) values.push(...auditRowValues(rows[i]!));
                const text = size === 1 ? SQLITE_INSERT_ONE : SQLITE_INSERT_CHUNK;
                await trx.executeQuery(CompiledQuery.raw(text, values));
                start += size;
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
            AUDIT_COLUMNS.map((column) => rows.map((row) => row[column])),
          ),
        );
      });
    },
    async close() {},
  };
}
