import type { Worker } from 'node:worker_threads';
import { startWorker, type WorkerModule } from '../../workers/worker-module.js';
import type { SqliteThreadReply } from './sqlite-thread-serve.js';

export { SQLITE_THREAD_NICENESS } from './sqlite-thread-serve.js';

/**
 * A better-sqlite3 connection on a thread of its own, for writes the event loop hands over and does not
 * run itself (the historian's commits, the engine's bookkeeping, the token endpoint's audit rows, the
 * WAL checkpoints).
 *
 * The thread's program is a worker module (workers/worker-module.ts) that calls
 * serveSqliteThread (sqlite-thread-serve.ts) with its `open`, which opens the connection (`openFile`
 * opens `file` with a busy timeout of `busyTimeoutMs`, foreign keys and `synchronous = FULL`) and
 * returns `{ run(message), close() }`. `run` answers one message (its return value comes back); an
 * error it throws comes back with the driver's message and code, so that classifyDriverError reads it
 * as on the event loop. Messages are answered in the order sent. The thread runs at a lower priority
 * than the event loop (sqlite-thread-serve.ts says why).
 *
 * The thread starts on the first message and is unreferenced while nothing is in flight. If it dies,
 * what was in flight is refused with code EIO (503) and the next message starts a new thread. If the
 * database cannot be opened, every message is refused with the driver's error.
 */
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
   * `name` is how errors call the thread ("the historian thread exited"); `program` is the worker
   * module that serves it; `workerData` reaches its `open`.
   */
  constructor(
    private readonly name: string,
    private readonly program: WorkerModule,
    private readonly workerData: object,
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
    const worker = startWorker(this.program, { workerData: this.workerData });
    worker.unref();
    this.worker = worker;
    this.ready = new Promise<void>((resolve, reject) => {
      worker.on('message', (reply: SqliteThreadReply<Answer>) => {
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
