import { parentPort, workerData } from 'node:worker_threads';
import Database from 'better-sqlite3';
import { lowerPriority } from '../../workers/thread-priority.js';

/**
 * The thread's side of a SQLite thread (sqlite-thread.ts): what every `*.worker.ts` that serves one
 * runs. Each such worker calls serveSqliteThread with its `open`.
 */

/**
 * How much nicer than the event loop a SQLite thread runs. On a machine with few cores, a commit handed
 * to an idle thread woke it on the event loop's core, and the scheduler let the woken thread run first:
 * the event loop stalled in postMessage while the thread committed (in a CPU profile of single HTTP
 * publishes on SQLite, 15% of the event loop's busy time was postMessage, where the call alone takes
 * 14-17 µs). A nicer thread waits for a free core instead of preempting the event loop.
 * Nine alternating runs each of wrk against single publishes on two cores: 12,937 publishes/s on
 * average at niceness +5 against 10,560/s at the event loop's (p99 10-20 ms against 18-26 ms); +10 and
 * +19 were no better than +5. MQTT QoS 0 (large commits, few wake-ups) did not change. Linux only
 * (workers/thread-priority.ts).
 */
export const SQLITE_THREAD_NICENESS = 5;

/** What `open` returns: `run` answers one message (its return value comes back), `close` closes it. */
export interface SqliteThreadConnection<Message, Answer> {
  run(message: Message): Answer;
  close(): void;
}

/** What every SQLite thread is given; `file` is the database, the rest is the worker's own. */
export interface SqliteThreadData {
  file: string;
  busyTimeoutMs: number;
  [key: string]: unknown;
}

/**
 * A statement written once with the query builder (statement-templates.ts), as a thread is sent it: its
 * SQL text, and each parameter either a value of the statement's own or a named slot.
 */
export interface StatementTemplate {
  sql: string;
  parameters: readonly ({ slot: string } | { value: unknown })[];
}

/** `template` prepared on `db`: runs it with its slots filled from `values`. */
export function prepareTemplate(
  db: Database.Database,
  template: StatementTemplate,
): (values: Readonly<Record<string, unknown>>) => Database.RunResult {
  const statement = db.prepare(template.sql);
  const { parameters } = template;
  return (values) => statement.run(parameters.map((p) => ('slot' in p ? values[p.slot] : p.value)));
}

/** What the thread sends back (read by sqlite-thread.ts). */
export interface SqliteThreadReply<Answer> {
  ready?: true;
  fatal?: { message: string; code?: string };
  answer?: Answer;
  error?: { message: string; code?: string };
}

/**
 * A connection to `data.file` as the threads use it: waits up to `data.busyTimeoutMs` for another
 * connection's write lock (in the busy handler, which blocks only this thread), commits on disk.
 */
export function openFile(data: SqliteThreadData): Database.Database {
  const db = new Database(data.file);
  db.pragma(`busy_timeout = ${Number(data.busyTimeoutMs)}`);
  db.pragma('foreign_keys = ON');
  db.pragma('synchronous = FULL');
  return db;
}

const report = (error: unknown) => {
  const e = error as { message?: unknown; code?: string } | undefined;
  return { message: String(e?.message), code: e?.code };
};

/**
 * Serves the thread's messages with the connection `open` makes from the thread's workerData: each
 * message is answered in the order sent, with what `run` returned or the error it threw (its message
 * and code, so that classifyDriverError reads it as on the event loop); `{ close: true }` closes the
 * connection and ends the thread. If `open` throws, the thread says so (`fatal`) and serves nothing.
 */
export function serveSqliteThread<Message, Answer, Data extends SqliteThreadData = SqliteThreadData>(
  open: (data: Data) => SqliteThreadConnection<Message, Answer>,
): void {
  const port = parentPort!;
  const send = (reply: SqliteThreadReply<Answer>) => port.postMessage(reply);
  lowerPriority(SQLITE_THREAD_NICENESS);
  let connection: SqliteThreadConnection<Message, Answer>;
  try {
    connection = open(workerData as Data);
  } catch (error) {
    send({ fatal: report(error) });
    return;
  }
  port.on('message', (message: Message & { close?: true }) => {
    if (message.close) {
      connection.close();
      port.close();
      return;
    }
    try {
      send({ answer: connection.run(message) });
    } catch (error) {
      send({ error: report(error) });
    }
  });
  send({ ready: true });
}
