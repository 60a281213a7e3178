import { sql } from 'kysely';
import { SqliteThread } from '../../../storage/sqlite/sqlite-thread.js';
import type { StatementTemplate } from '../../../storage/sqlite/sqlite-thread-serve.js';
import { slot, sqliteCompiler, statementTemplate } from '../../../storage/statement-templates.js';
import type { EngineExecutionTable } from '../../../storage/tables.js';
import type { WorkerModule } from '../../../workers/worker-module.js';
import { CLAIMED_COLUMNS, claimUpdate, skipUpdate } from './execution-claims.js';
import { finishUpdate } from './execution-finishes.js';
import { RUN_COLUMNS, RUN_CONFLICT } from './node-run-writes.js';

/**
 * The engine's bookkeeping turns on SQLite, on a thread of its own with its own connection to
 * `meridian.db` (as the historian's commits are, sqlite-historian-thread.ts): one message a turn, in which
 * the thread stores node runs, records ends and claims executions in one transaction, committed with
 * `synchronous = FULL` (on disk when it answers). Bursts of new executions are stored there too: the UNS
 * and connection triggers' with the engine's next turn, whose claim may take them in the same transaction
 * (ExecutionEngine.enqueue), others on their own (enqueueMany). On the event loop, a turn's statements, built through
 * the query builder, took about 46 µs of the loop an execution at ~40 executions a turn, a third of the
 * loop's time in the UNS-triggered pipeline bench; the loop now sends the turn and reads the claimed rows.
 *
 * The statements are those of node-run-writes.ts, finishExecutions (execution-finishes.ts) and
 * claimExecutions (execution-claims.ts), which PostgreSQL and an in-memory SQLite database run, written
 * out for SQLite: the same conditions, so that a claim here and one on another connection (another
 * replica) never both take an execution, and a pipeline's concurrency holds (transactions begin
 * IMMEDIATE: one at a time).
 * The thread waits for another connection's write lock in SQLite's busy handler, which blocks only it.
 * As in claimExecutions, the new executions of a turn's transaction join the claim's candidates and are
 * inserted as it leaves them (running, skipped or queued): written once, not inserted queued and then
 * updated. A claim of one stored queued by this thread answers it from what was inserted instead of
 * reading it back (engine-bookkeeping.worker.ts, the thread's program).
 */
/** Every column of an execution row, in the order the thread's insert binds them. */
export const EXECUTION_COLUMNS = [...CLAIMED_COLUMNS, 'definition'] as const;

/** New executions to store (ExecutionsRepository.enqueueMany). */
export interface EnqueueBurst {
  /** organization id, pipeline id, version, definition text: each stored unless it is already. */
  definitions: unknown[][];
  /** Rows as values in EXECUTION_COLUMNS order. */
  executions: unknown[][];
}

/** A bookkeeping turn as the thread runs it (ExecutionsRepository.finishAndClaim). */
export interface TurnMessage {
  replica: string;
  /** Node runs as values: id, execution id, then RUN_COLUMNS (nodeRunValues). */
  runs: unknown[][];
  finishes: { id: string; status: string; reason: string | null; error: string | null; finishedAt: number }[];
  now: number;
  leaseMs: number;
  max: number;
}

export interface TurnAnswer {
  finished: string[];
  /** The claimed rows (every column but the definition), in the order claimed. */
  claimed: (Omit<EngineExecutionTable, 'definition'> & { fromQueue: boolean })[];
  /** The definition text of each claimed version, by `<pipeline id>@<version>`. */
  definitions: Record<string, string>;
}

const BUSY_TIMEOUT_MS = 10_000;

/** What the thread is given: the file, and the columns its statements name. */
export interface EngineThreadData {
  file: string;
  busyTimeoutMs: number;
  runColumns: readonly string[];
  runConflict: string;
  claimedColumns: readonly string[];
  executionColumns: readonly string[];
  templates: Record<keyof typeof TEMPLATES, StatementTemplate>;
}

/** One execution, by the slot `id`. */
const byId = sql<boolean>`${sql.ref('id')} = ${slot<string>('id')}`;

/**
 * The statements the thread shares with the Kysely path (claimExecutions, finishExecutions), built by
 * the same functions, run an execution at a time: slots `replica`, `leaseUntil`, `now`, `id` (claim),
 * `now`, `id` (skip), `replica`, `status`, `reason`, `error`, `finishedAt`, `id` (finish).
 */
const TEMPLATES = {
  claim: statementTemplate(
    claimUpdate(
      sqliteCompiler,
      { replica: slot('replica'), leaseUntil: slot('leaseUntil'), now: slot('now') },
      byId,
    ),
  ),
  skip: statementTemplate(skipUpdate(sqliteCompiler, slot('now'), byId)),
  finish: statementTemplate(
    finishUpdate(
      sqliteCompiler,
      slot('replica'),
      {
        status: slot('status'),
        reason: slot('reason'),
        error: slot('error'),
        finishedAt: slot('finishedAt'),
      },
      byId,
    ),
  ),
};

/** The thread's program. */
const ENGINE_WORKER: WorkerModule = { name: 'engine-bookkeeping', from: import.meta.url };

/** What the thread is sent: one transaction. */
export interface ThreadMessage {
  enqueues: EnqueueBurst[];
  turn: TurnMessage | null;
}

interface Waiting<T, A> {
  message: T;
  resolve(answer: A): void;
  reject(error: Error): void;
}

/**
 * The engine's bookkeeping on a SQLite file, on its own thread (see above). At most two messages are in
 * flight (one committing, the next waiting at the thread); the bursts of executions and a turn that arrive
 * meanwhile go together in the one after, as one transaction and one disk sync (a group commit): while
 * values pour in, a turn does not wait behind a transaction for each burst. If that transaction fails,
 * all it carried is refused with the error.
 */
export class SqliteEngineThread {
  private readonly thread: SqliteThread<ThreadMessage, TurnAnswer | null>;
  /** Messages sent and not answered: at most two, one committing and the next waiting at the thread. */
  private sent = 0;
  private readonly bursts: Waiting<EnqueueBurst, void>[] = [];
  private readonly turns: (Waiting<TurnMessage, TurnAnswer> & { burst: EnqueueBurst | undefined })[] = [];

  /** `program` is for tests that need a thread that misbehaves. */
  constructor(file: string, program: WorkerModule = ENGINE_WORKER) {
    const data: EngineThreadData = {
      file,
      busyTimeoutMs: BUSY_TIMEOUT_MS,
      runColumns: RUN_COLUMNS,
      runConflict: RUN_CONFLICT,
      claimedColumns: CLAIMED_COLUMNS,
      executionColumns: EXECUTION_COLUMNS,
      templates: TEMPLATES,
    };
    this.thread = new SqliteThread('engine bookkeeping thread', program, data);
  }

  /**
   * Runs a bookkeeping turn; answers what it recorded and claimed once committed and on disk. `burst`,
   * new executions, is stored in the same transaction, before the claim (which may take them).
   */
  turn(message: TurnMessage, burst?: EnqueueBurst): Promise<TurnAnswer> {
    return new Promise((resolve, reject) => {
      this.turns.push({ message, burst, resolve, reject });
      this.send();
    });
  }

  /** Stores new executions and their definitions; settles once committed and on disk. */
  enqueue(burst: EnqueueBurst): Promise<void> {
    return new Promise((resolve, reject) => {
      this.bursts.push({ message: burst, resolve, reject });
      this.send();
    });
  }

  async close(): Promise<void> {
    await this.thread.close();
  }

  private send(): void {
    if (this.sent >= 2 || (this.bursts.length === 0 && this.turns.length === 0)) return;
    this.sent++;
    const bursts = this.bursts.splice(0);
    // One turn a transaction: a second (another caller's) goes with the next.
    const turn = this.turns.shift();
    const enqueues = bursts.map((b) => b.message);
    if (turn?.burst) enqueues.push(turn.burst);
    this.thread
      .request({ enqueues, turn: turn?.message ?? null })
      .then(
        (answer) => {
          for (const b of bursts) b.resolve();
          turn?.resolve(answer!);
        },
        (error: Error) => {
          for (const b of bursts) b.reject(error);
          turn?.reject(error);
        },
      )
      .finally(() => {
        this.sent--;
        this.send();
      });
  }
}
