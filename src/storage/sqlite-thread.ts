import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';

/** How much nicer than the event loop a SQLite thread runs (Linux; setpriority on the thread). */
export const SQLITE_THREAD_NICENESS = 5;

/**
 * The thread runs at a lower priority than the event loop. On a machine with few cores, a commit
 * handed to an idle thread woke it on the event loop's core, and the scheduler let the woken thread
 * run first: the event loop stalled in postMessage while the thread committed (in a CPU profile of
 * single HTTP publishes on SQLite, 15% of the event loop's busy time was postMessage, where the call
 * alone takes 14-17 µs). A nicer thread waits for a free core instead of preempting the event loop.
 * Nine alternating runs each of wrk against single publishes on two cores: 12,937 publishes/s on
 * average at niceness +5 against 10,560/s at the event loop's (p99 10-20 ms against 18-26 ms); +10 and
 * +19 were no better than +5. MQTT QoS 0 (large commits, few wake-ups) did not change. Linux only:
 * elsewhere, or where it is refused, the thread keeps the process's priority.
 */
const LOWER_PRIORITY = `
try {
  const { getPriority, setPriority } = require('node:os');
  const tid = Number(require('node:fs').readlinkSync('/proc/thread-self').split('/').pop());
  if (Number.isInteger(tid) && tid > 0) setPriority(tid, Math.min(19, getPriority(tid) + ${SQLITE_THREAD_NICENESS}));
} catch {
  // Not Linux, or not allowed.
}`;

/**
 * A better-sqlite3 connection on a thread of its own, for writes the event loop hands over and does not
 * run itself (the historian's commits, the token endpoint's audit rows).
 *
 * The thread's work is plain CommonJS source defining `function open(Database, workerData)`, which opens
 * the connection (`openFile(Database, workerData)` opens `workerData.file` with a busy timeout of
 * `workerData.busyTimeoutMs`, foreign keys and `synchronous = FULL`) and returns `{ run(message),
 * close() }`. `run` answers one message (its return value comes back); an error it throws comes back with
 * the driver's message and code, so that classifyDriverError reads it as on the event loop. Messages are
 * answered in the order sent.
 *
 * The thread starts on the first message and is unreferenced while nothing is in flight. If it dies,
 * what was in flight is refused with code EIO (503) and the next message starts a new thread. If the
 * database cannot be opened, every message is refused with the driver's error.
 */
export function sqliteThreadSource(open: string): string {
  // Evaluated in the worker: it must run unchanged from sources, tests and the bundle.
  return `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.driver);
${LOWER_PRIORITY}
// A connection to workerData.file as the threads use it: waits up to workerData.busyTimeoutMs for another
// connection's write lock (in the busy handler, which blocks only this thread), commits on disk.
function openFile(Database, workerData) {
  const db = new Database(workerData.file);
  db.pragma('busy_timeout = ' + workerData.busyTimeoutMs);
  db.pragma('foreign_keys = ON');
  db.pragma('synchronous = FULL');
  return db;
}
${open}
const report = (error) => ({ message: String(error && error.message), code: error && error.code });
let connection;
try {
  connection = open(Database, workerData);
} catch (error) {
  parentPort.postMessage({ fatal: report(error) });
}
if (connection) {
  parentPort.on('message', (message) => {
    if (message.close) {
      connection.close();
      parentPort.close();
      return;
    }
    try {
      parentPort.postMessage({ answer: connection.run(message) });
    } catch (error) {
      parentPort.postMessage({ error: report(error) });
    }
  });
  parentPort.postMessage({ ready: true });
}
`;
}

interface Reply<Answer> {
  ready?: true;
  fatal?: { message: string; code?: string };
  answer?: Answer;
  error?: { message: string; code?: string };
}

interface Pending<Answer> {
  resolve(answer: Answer): void;
  reject(error: Error): void;
}

/** An error as the driver threw it in the thread: the same message and code, for classifyDriverError. */
function driverError(reported: { message: string; code?: string | undefined }): Error {
  return Object.assign(new Error(reported.message), { code: reported.code });
}

export class SqliteThread<Message extends object, Answer> {
  private worker: Worker | undefined;
  private ready: Promise<void> | undefined;
  private readonly inFlight: Pending<Answer>[] = [];
  /** Settles once the last message sent has been answered (so every earlier one too). */
  private answered: Promise<unknown> = Promise.resolve();

  /**
   * `name` is how errors call the thread ("the historian thread exited"); `source` is what
   * sqliteThreadSource made; `workerData` reaches `open`, with `driver` (better-sqlite3's path) added.
   */
  constructor(
    private readonly name: string,
    private readonly source: string,
    private readonly workerData: Record<string, unknown>,
  ) {}

  /** Sends one message; resolves with what `run` returned for it. */
  async request(message: Message): Promise<Answer> {
    await this.start();
    const answer = new Promise<Answer>((resolve, reject) => {
      this.inFlight.push({ resolve, reject });
      this.worker!.ref();
      this.worker!.postMessage(message);
    });
    this.answered = answer.catch(() => {});
    return answer;
  }

  /** Stops the thread once what is in flight has been answered. */
  async close(): Promise<void> {
    const worker = this.worker;
    if (!worker) return;
    await this.ready?.catch(() => {});
    await this.answered;
    if (this.worker !== worker) return;
    this.worker = undefined;
    this.ready = undefined;
    const exited = new Promise((resolve) => worker.once('exit', resolve));
    // Referenced until it has exited: the process must not end with the database still open.
    worker.ref();
    worker.postMessage({ close: true });
    await exited;
  }

  private start(): Promise<void> {
    if (this.ready) return this.ready;
    const worker = new Worker(this.source, {
      eval: true,
      // No inherited flags: the source is plain CommonJS and needs no loaders.
      execArgv: [],
      workerData: { ...this.workerData, driver: createRequire(import.meta.url).resolve('better-sqlite3') },
    });
    worker.unref();
    this.worker = worker;
    this.ready = new Promise<void>((resolve, reject) => {
      worker.on('message', (reply: Reply<Answer>) => {
        if (reply.ready) return resolve();
        // better-sqlite3 reports a missing directory without a code: it is still a database that cannot open.
        if (reply.fatal)
          return reject(driverError({ ...reply.fatal, code: reply.fatal.code ?? 'SQLITE_CANTOPEN' }));
        const done = this.inFlight.shift();
        if (this.inFlight.length === 0) worker.unref();
        if (!done) return;
        if (reply.error) return done.reject(driverError(reply.error));
        done.resolve(reply.answer as Answer);
      });
      const stopped = (error: Error) => {
        if (this.worker === worker) {
          this.worker = undefined;
          this.ready = undefined;
        }
        reject(error);
        for (const pending of this.inFlight.splice(0)) pending.reject(error);
      };
      worker.on('error', (error) =>
        stopped(Object.assign(new Error(`the ${this.name} failed: ${error.message}`), { code: 'EIO' })),
      );
      worker.on('exit', (code) =>
        stopped(Object.assign(new Error(`the ${this.name} exited (code ${code})`), { code: 'EIO' })),
      );
    });
    return this.ready;
  }
}
