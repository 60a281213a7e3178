import { SqliteThread, sqliteThreadSource } from '../../../storage/sqlite-thread.js';
import type { EngineExecutionTable } from '../../../storage/tables.js';
import { CLAIMED_COLUMNS } from './execution-claims.js';
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
 * New executions are inserted queued and then claimed here, with the same outcome as claimExecutions,
 * which inserts those it takes as running instead (sparing PostgreSQL an update, which writes a new copy
 * of the row); here the claim answers them from what was inserted (below).
 */
const WORKER_SOURCE = sqliteThreadSource(`
function open(Database, workerData) {
  const db = openFile(Database, workerData);
  const begin = db.prepare('begin immediate');
  const commit = db.prepare('commit');
  const rollback = db.prepare('rollback');
  const RUN_COLUMNS = workerData.runColumns;
  const saveRun = db.prepare('insert into engine_node_runs (id, execution_id, ' + RUN_COLUMNS.join(', ') +
    ') values (' + ['?', '?', ...RUN_COLUMNS.map(() => '?')].join(', ') + ') ' + workerData.runConflict);
  const finish = db.prepare('update engine_executions set status = ?, reason = ?, error = ?, ' +
    "lease_until = null, checkpoint = null, finished_at = ? where id = ? and locked_by = ? and coalesce(status, '') = 'running'");
  const CANDIDATE = 'select id, status, pipeline_id, pipeline_version from engine_executions where ';
  const resumable = db.prepare(CANDIDATE + "((status = 'running' and lease_until < ?) or " +
    "(status = 'waiting' and run_at <= ?)) order by priority, queued_at limit ?");
  const due = db.prepare(CANDIDATE + "status = 'queued' order by priority, queued_at limit ?");
  const definitionsOf = db.prepare('select pipeline_version, definition from engine_definitions where pipeline_id = ?');
  const definitionInRow = db.prepare("select definition from engine_executions where id = ? and definition != ''").pluck();
  const runningOf = db.prepare("select count(*) from engine_executions where pipeline_id = ? and status = 'running' " +
    'and lease_until >= ?').pluck();
  const skip = db.prepare("update engine_executions set status = 'skipped', reason = 'overlap', finished_at = ? " +
    "where id = ? and coalesce(status, '') = 'queued'");
  const claim = db.prepare("update engine_executions set status = 'running', locked_by = ?, lease_until = ?, " +
    'claims = claims + 1, started_at = coalesce(started_at, ?) where id = ? and (' +
    "coalesce(status, '') = 'queued' or (coalesce(status, '') = 'running' and lease_until < ?) or " +
    "(coalesce(status, '') = 'waiting' and run_at <= ?))");
  const CLAIMED = workerData.claimedColumns;
  const claimedRow = db.prepare('select ' + CLAIMED.join(', ') + ' from engine_executions where id = ?');

  // The rows this connection inserted as queued and has not claimed, by id: their values as inserted
  // (executionColumns order). A queued row never changes but to leave the queue (a claim, a skip, a
  // cancel: each a final change of status), so the claim of one answers these values with the claim's
  // changes instead of reading the row back, which cost more than the claim's update itself (about 10 of
  // 14 µs a claim). A transaction's inserts are forgotten if it rolls back, its claims once it commits.
  // Bounded in rows and in characters (a trigger's value can be large); the oldest go first, and a row
  // larger than ROW_CHARS is not kept (its claim reads it back).
  const inserted = new Map();
  const ROWS = 65536;
  const CHARS = 16 * 1024 * 1024;
  const ROW_CHARS = 64 * 1024;
  let chars = 0;
  const COLUMN = Object.fromEntries(workerData.executionColumns.map((c, i) => [c, i]));
  const charsOf = (values) => (values[COLUMN.trigger] ?? '').length + (values[COLUMN.input] ?? '').length;
  let insertedNow = [];
  let claimedNow = [];
  function forget(id) {
    const values = inserted.get(id);
    if (values === undefined) return;
    inserted.delete(id);
    chars -= charsOf(values);
  }
  function remember(values) {
    const size = charsOf(values);
    if (values[COLUMN.status] !== 'queued' || size > ROW_CHARS) return;
    const id = values[COLUMN.id];
    inserted.set(id, values);
    chars += size;
    insertedNow.push(id);
    while (inserted.size > ROWS || chars > CHARS) forget(inserted.keys().next().value);
  }
  function settle(committed) {
    for (const id of committed ? claimedNow : insertedNow) forget(id);
    insertedNow = [];
    claimedNow = [];
  }
  // The row as the claim left it: the values inserted, or read back (a row of another connection or
  // from before this thread, a resumed or expired one).
  function rowAfterClaim(candidate, replica, now, leaseMs) {
    const values = candidate.status === 'queued' ? inserted.get(candidate.id) : undefined;
    if (values === undefined) return claimedRow.get(candidate.id);
    claimedNow.push(candidate.id);
    const row = {};
    for (const c of CLAIMED) row[c] = values[COLUMN[c]];
    row.status = 'running';
    row.locked_by = replica;
    row.lease_until = now + leaseMs;
    row.claims = values[COLUMN.claims] + 1;
    row.started_at = values[COLUMN.started_at] ?? now;
    return row;
  }

  // A version's definition text and concurrency, by pipeline id and version (versions never change).
  const versions = new Map();
  function versionOf(candidate) {
    const key = candidate.pipeline_id + '@' + candidate.pipeline_version;
    let version = versions.get(key);
    if (version !== undefined) return version;
    for (const row of definitionsOf.all(candidate.pipeline_id)) {
      const k = candidate.pipeline_id + '@' + row.pipeline_version;
      if (!versions.has(k)) versions.set(k, describe(row.definition));
    }
    version = versions.get(key);
    if (version === undefined) {
      // Rows from before engine_definitions hold their own text.
      const text = definitionInRow.get(candidate.id);
      if (text === undefined) return undefined;
      version = describe(text);
      versions.set(key, version);
    }
    if (versions.size > 1000) versions.delete(versions.keys().next().value);
    return version;
  }
  function describe(text) {
    const { mode, max } = JSON.parse(text).settings.concurrency;
    return { text, mode, limit: mode === 'parallel' ? max : 1 };
  }

  function claimUpTo(replica, now, leaseMs, max) {
    if (max <= 0) return { claimed: [], definitions: {} };
    const limit = Math.max(20, max * 2);
    const candidates = resumable.all(now, now, limit);
    if (candidates.length < limit) candidates.push(...due.all(limit - candidates.length));
    const running = new Map();
    const chosen = [];
    for (const candidate of candidates) {
      if (chosen.length >= max) break;
      const version = versionOf(candidate);
      if (version === undefined) continue;
      if (candidate.status === 'queued') {
        const pipeline = candidate.pipeline_id;
        if (!running.has(pipeline)) running.set(pipeline, runningOf.get(pipeline, now));
        const busy = running.get(pipeline) >= version.limit;
        if (busy && version.mode === 'skip') skip.run(now, candidate.id);
        if (busy) continue;
        running.set(pipeline, running.get(pipeline) + 1);
      }
      chosen.push(candidate);
    }
    const claimed = [];
    const definitions = {};
    for (const candidate of chosen) {
      if (claim.run(replica, now + leaseMs, now, candidate.id, now, now).changes !== 1) continue;
      const row = rowAfterClaim(candidate, replica, now, leaseMs);
      // No other claim came between the read and the update: this is the execution's first.
      row.fromQueue = candidate.status === 'queued' && row.claims === 1;
      claimed.push(row);
      const key = row.pipeline_id + '@' + row.pipeline_version;
      definitions[key] = versions.get(key).text;
    }
    return { claimed, definitions };
  }

  const storeDefinition = db.prepare('insert into engine_definitions (organization_id, pipeline_id, ' +
    'pipeline_version, definition) values (?, ?, ?, ?) on conflict (pipeline_id, pipeline_version) do nothing');
  const COLUMNS = workerData.executionColumns;
  const insertExecution = db.prepare('insert into engine_executions (' + COLUMNS.join(', ') + ') values (' +
    COLUMNS.map(() => '?').join(', ') + ')');

  function enqueue({ definitions, executions }) {
    for (const definition of definitions) storeDefinition.run(definition);
    for (const execution of executions) {
      insertExecution.run(execution);
      remember(execution);
    }
  }

  function turn({ replica, runs, finishes, now, leaseMs, max }) {
    for (const run of runs) saveRun.run(run);
    const finished = [];
    for (const f of finishes)
      if (finish.run(f.status, f.reason, f.error, f.finishedAt, f.id, replica).changes === 1) finished.push(f.id);
    return { finished, ...claimUpTo(replica, now, leaseMs, max) };
  }

  return {
    close: () => db.close(),
    // One transaction: the new executions first (a claim in the same turn may take them), then the turn.
    run({ enqueues, turn: next }) {
      begin.run();
      try {
        for (const burst of enqueues) enqueue(burst);
        const answer = next ? turn(next) : null;
        commit.run();
        settle(true);
        return answer;
      } catch (error) {
        if (db.inTransaction) rollback.run();
        settle(false);
        throw error;
      }
    },
  };
}
`);

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

/** What the thread is sent: one transaction. */
interface ThreadMessage {
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

  constructor(file: string, workerSource: string = WORKER_SOURCE) {
    this.thread = new SqliteThread('engine bookkeeping thread', workerSource, {
      file,
      busyTimeoutMs: BUSY_TIMEOUT_MS,
      runColumns: RUN_COLUMNS,
      runConflict: RUN_CONFLICT,
      claimedColumns: CLAIMED_COLUMNS,
      executionColumns: EXECUTION_COLUMNS,
    });
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
