// The compaction thread's program (compaction-thread.ts; loaded by compaction.worker.ts once the thread
// runs at its priority): a connection of its own (SQLite: meridian.db with the
// historian file attached, as the event loop's; PostgreSQL: a pool of one) and a SegmentStore over it.
// A message is one call of the store, answered in the order sent, with the SqliteThread protocol
// (ready, answer, error, fatal; `{ close: true }` closes the connection and ends the thread).
import { parentPort, workerData } from 'node:worker_threads';
import SQLite from 'better-sqlite3';
import { Kysely } from 'kysely';
import { type DialectName, openStorage } from '../../../../storage/database.js';
import { SharedSqliteDialect } from '../../../../storage/sqlite/sqlite-driver.js';
import type { SqliteThreadReply } from '../../../../storage/sqlite/sqlite-thread-serve.js';
import type { Database } from '../../../../storage/tables.js';
import { HISTORIAN_SCHEMA } from '../historian-layout.js';
import type { CompactionMessage, CompactionThreadData } from './compaction-thread.js';
import { SegmentStore } from './segment-store.js';

function open(data: CompactionThreadData): { db: Kysely<Database>; dialect: DialectName } {
  if (data.dialect === 'postgres') {
    const storage = openStorage({ databaseUrl: data.databaseUrl, dataDir: '', poolSize: 1 });
    return { db: storage.db, dialect: 'postgres' };
  }
  const connection = new SQLite(data.file);
  connection.pragma(`busy_timeout = ${Number(data.busyTimeoutMs)}`);
  connection.pragma('foreign_keys = ON');
  connection.prepare(`attach database ? as ${HISTORIAN_SCHEMA}`).run(data.historianFile);
  // One transaction a topic-day: a power loss undoes the last ones whole (compaction-thread.ts).
  connection.pragma(`${HISTORIAN_SCHEMA}.synchronous = NORMAL`);
  // BEGIN IMMEDIATE (SharedSqliteDialect): the transaction reads the segment first and writes after.
  const db = new Kysely<Database>({
    dialect: new SharedSqliteDialect({ database: connection }, connection),
  });
  return { db, dialect: 'sqlite' };
}

function run(store: SegmentStore, message: CompactionMessage): Promise<unknown> {
  switch (message.op) {
    case 'series':
      return store.seriesBefore(message.beforeUs);
    case 'prepare':
      return store.prepareDay(message.topicId, message.dayUs);
    case 'next':
      return store.nextRowAt(message.topicId, message.fromUs, message.beforeUs);
    case 'compact':
      return store.compactDay(message.topicId, message.dayUs, message.dryRun);
  }
}

const report = (error: unknown) => {
  const e = error as { message?: unknown; code?: string } | undefined;
  return { message: String(e?.message), code: e?.code };
};

const port = parentPort!;
const send = (reply: SqliteThreadReply<unknown>) => port.postMessage(reply);
let opened: { db: Kysely<Database>; dialect: DialectName } | undefined;
try {
  opened = open(workerData as CompactionThreadData);
} catch (error) {
  send({ fatal: report(error) });
}
if (opened) {
  const { db, dialect } = opened;
  const store = new SegmentStore(db, dialect);
  let queue: Promise<void> = Promise.resolve();
  port.on('message', (message: CompactionMessage & { close?: true }) => {
    queue = queue.then(async () => {
      if (message.close) {
        await db.destroy();
        port.close();
        return;
      }
      try {
        send({ answer: await run(store, message) });
      } catch (error) {
        send({ error: report(error) });
      }
    });
  });
  send({ ready: true });
}
