import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import type { Kysely } from 'kysely';
import type { Storage } from '../../storage/database.js';
import type { AuditLogTable, Database } from '../../storage/tables.js';

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
] as const;

// Runs in a worker thread with its own SQLite connection to the same file: better-sqlite3 commits
// (and fsyncs) synchronously, and on the main thread every commit would stall the event loop.
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const SQLite = require(workerData.driver);
const db = new SQLite(workerData.path);
db.pragma('journal_mode = WAL');
db.pragma('synchronous = FULL');
db.pragma('busy_timeout = 5000');
const insert = db.prepare('insert into audit_log (${COLUMNS.join(', ')}) values (${COLUMNS.map(() => '?').join(', ')})');
const insertAll = db.transaction((rows) => { for (const row of rows) insert.run(row); });
parentPort.on('message', ({ id, rows }) => {
  try { insertAll(rows); parentPort.postMessage({ id }); }
  catch (error) { parentPort.postMessage({ id, error: String(error && error.message) }); }
});
`;

/**
 * The audit writer for this storage: a worker thread for an SQLite file, the shared query builder
 * otherwise (PostgreSQL writes do not block the event loop; an in-memory SQLite cannot be shared).
 */
export function createAuditWriter(storage: Storage): AuditWriter {
  if (storage.dialect === 'sqlite' && storage.location !== ':memory:')
    return new WorkerAuditWriter(storage.location);
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

class WorkerAuditWriter implements AuditWriter {
  private readonly worker: Worker;
  private readonly pending = new Map<number, { resolve: () => void; reject: (error: Error) => void }>();
  private nextId = 0;

  constructor(path: string) {
    const driver = createRequire(import.meta.url).resolve('better-sqlite3');
    this.worker = new Worker(WORKER_SOURCE, { eval: true, workerData: { path, driver } });
    this.worker.unref();
    this.worker.on('message', ({ id, error }: { id: number; error?: string }) => {
      const waiter = this.pending.get(id);
      this.pending.delete(id);
      if (error) waiter?.reject(new Error(`audit write failed: ${error}`));
      else waiter?.resolve();
    });
    this.worker.on('error', (error) => {
      for (const waiter of this.pending.values()) waiter.reject(error);
      this.pending.clear();
    });
  }

  write(rows: AuditLogTable[]): Promise<void> {
    if (rows.length === 0) return Promise.resolve();
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.worker.postMessage({ id, rows: rows.map((row) => COLUMNS.map((column) => row[column])) });
    });
  }

  async close(): Promise<void> {
    await this.worker.terminate();
  }
}
