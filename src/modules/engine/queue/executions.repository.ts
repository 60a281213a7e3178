import type { Kysely } from 'kysely';
import type { Database } from '../../../storage/tables.js';
import { inTextList } from '../../../storage/value-lists.js';
import { claimExecutions, statusOf } from './execution-claims.js';
import { storeDefinitions, versionKey } from './execution-definitions.js';
import { type FinishRecord, finishExecutions } from './execution-finishes.js';
import { ExecutionReads } from './execution-reads.js';
import { purgeExecutions, type RetentionDefaults } from './execution-retention.js';
import {
  type Checkpoint,
  type ExecutionRow,
  type ExecutionStatus,
  executionWith,
  type NodeRunRow,
} from './execution-rows.js';
import { ExpiredLeaseReads } from './expired-lease-reads.js';
import {
  burstOf,
  definitionRow,
  type EnqueueInput,
  executionRow,
  insertBurst,
  threadBurst,
} from './new-executions.js';
import { nodeRunValues, saveNodeRuns } from './node-run-writes.js';
import type { EnqueueBurst, SqliteEngineThread, TurnMessage } from './sqlite-engine-thread.js';

export type { FinishRecord } from './execution-finishes.js';
export type {
  Attempt,
  Checkpoint,
  ExecutionDefinition,
  ExecutionRow,
  ExecutionStatus,
  ExecutionTrigger,
  MemoEntry,
  NodeRunRow,
} from './execution-rows.js';
export type { EnqueueInput } from './new-executions.js';

const FINAL: ExecutionStatus[] = ['completed', 'completed_with_errors', 'failed', 'cancelled', 'skipped'];

/** The executions table is the engine's queue: enqueue, claim with a lease, renew, finish; and reads. */
export class ExecutionsRepository extends ExecutionReads {
  /**
   * `durable`: Storage.durableWrite, for the engine's hot commits (enqueues and bookkeeping turns), so that
   * on SQLite their disk flush does not block the event loop. Without it they commit as any write does.
   */
  constructor(
    db: Kysely<Database>,
    private readonly durable: <T>(work: (db: Kysely<Database>) => Promise<T>) => Promise<T> = (work) =>
      work(db),
    /** On a SQLite file: the thread that runs the bookkeeping turns (finishAndClaim). */
    private readonly turns?: SqliteEngineThread,
  ) {
    super(db);
  }

  /**
   * The pipeline versions whose definition a committed turn stored (engine_definitions keeps each for
   * good): a turn with new executions of these stores none, one statement less (finishAndClaim).
   */
  private readonly stored = new Set<string>();

  /** Each replica's last turn asked for, until it ends (finishAndClaim). */
  private readonly lastTurn = new Map<string, Promise<void>>();

  /** When the turns looked for expired leases (ExpiredLeaseReads); the bookkeeping thread looks every turn. */
  private readonly expiredReads = new ExpiredLeaseReads();

  async enqueue(input: EnqueueInput & { idempotencyKey?: undefined }): Promise<ExecutionRow>;
  /** With an idempotency key: undefined when an execution with that key exists (another replica fired it). */
  async enqueue(input: EnqueueInput & { idempotencyKey: string }): Promise<ExecutionRow | undefined>;
  async enqueue(
    input: EnqueueInput & { idempotencyKey?: string | undefined },
  ): Promise<ExecutionRow | undefined> {
    const row = executionRow(input);
    const definition = definitionRow(input);
    // The definition first, on its own: stored once per version, it is harmless if the insert fails.
    await storeDefinitions(this.db, [definition]);
    const execution = () => executionWith(row, definition.definition);
    if (input.idempotencyKey === undefined) {
      await this.db.insertInto('engine_executions').values(row).execute();
      return execution();
    }
    const inserted = await this.db
      .insertInto('engine_executions')
      .values(row)
      .onConflict((oc) => oc.column('idempotency_key').where('idempotency_key', 'is not', null).doNothing())
      .returning('id')
      .executeTakeFirst();
    return inserted ? execution() : undefined;
  }

  /**
   * Enqueues with an idempotency key in one transaction with `current`, which answers the pipeline as
   * it is now (its row locked on PostgreSQL) or undefined when the execution must not be queued (the
   * pipeline was disabled meanwhile): a change committed before this call is always seen. Answers the
   * execution, or undefined when it was not queued (refused, or an execution with the key exists).
   */
  async enqueueIf(
    input: EnqueueInput & { idempotencyKey: string },
    current: (trx: Kysely<Database>) => Promise<EnqueueInput['pipeline'] | undefined>,
  ): Promise<ExecutionRow | undefined> {
    return this.db.transaction().execute(async (trx) => {
      const pipeline = await current(trx);
      if (!pipeline) return undefined;
      const now = { ...input, pipeline };
      const row = executionRow(now);
      const definition = definitionRow(now);
      await storeDefinitions(trx, [definition]);
      const inserted = await trx
        .insertInto('engine_executions')
        .values(row)
        .onConflict((oc) => oc.column('idempotency_key').where('idempotency_key', 'is not', null).doNothing())
        .returning('id')
        .executeTakeFirst();
      return inserted ? executionWith(row, definition.definition) : undefined;
    });
  }

  /** Enqueues several executions (without idempotency keys) in one statement; answers their ids. */
  async enqueueMany(inputs: EnqueueInput[]): Promise<string[]> {
    if (inputs.length === 0) return [];
    const burst = burstOf(inputs);
    if (this.turns) await this.turns.enqueue(threadBurst(burst));
    else await this.durable((db) => db.transaction().execute((trx) => insertBurst(trx, burst)));
    return burst.rows.map((r) => r.id);
  }

  /**
   * Claims one execution for `replica`: a queued one that is due, or a running one whose lease expired
   * (its replica died). The conditional update succeeds for one claimer only, on both databases: a
   * second replica's update finds the row no longer claimable and changes nothing.
   */
  async claim(replica: string, now: number, leaseMs: number): Promise<ExecutionRow | undefined> {
    return (await this.claimMany(replica, now, leaseMs, 1))[0];
  }

  /** Claims up to `max` executions for `replica` in three statements (execution-claims.ts). */
  claimMany(replica: string, now: number, leaseMs: number, max: number): Promise<ExecutionRow[]> {
    return claimExecutions(this.db, replica, now, leaseMs, max);
  }

  /**
   * Extends the leases of the executions `replica` still holds, in one statement whatever their number;
   * answers the ids renewed (one missing was taken over, cancelled or finished meanwhile).
   */
  async renewLeases(ids: readonly string[], replica: string, until: number): Promise<Set<string>> {
    if (ids.length === 0) return new Set();
    const rows = await this.db
      .updateTable('engine_executions')
      .set({ lease_until: until })
      .where(inTextList(this.db, 'id', ids))
      .where('locked_by', '=', replica)
      .where(statusOf, '=', 'running')
      .returning('id')
      .execute();
    return new Set(rows.map((row) => row.id));
  }

  /** Extends the lease while `replica` still holds it; false when another replica took it over. */
  async renewLease(id: string, replica: string, until: number): Promise<boolean> {
    return (await this.renewLeases([id], replica, until)).has(id);
  }

  /**
   * One bookkeeping turn of an engine in one transaction (one commit, so one disk sync, whatever the
   * number): stores node runs (the last state of each), records `finishes` (finishExecutions), then
   * claims up to `max` executions, among them the new ones of `enqueue`, which the claim stores.
   * Answers the ids that were finished and the claimed executions.
   *
   * A replica's turns commit in the order they were asked for, even with two in flight: an execution's
   * end is never stored before the node runs an earlier turn carries (the bookkeeping thread answers
   * messages in order; on PostgreSQL, whose pool would run them at once, the next turn's transaction
   * begins once the one before it has ended).
   */
  async finishAndClaim(
    replica: string,
    turn: { runs: NodeRunRow[]; finishes: FinishRecord[]; enqueue?: EnqueueInput[] },
    now: number,
    leaseMs: number,
    max: number,
  ): Promise<{ finished: Set<string>; claimed: ExecutionRow[] }> {
    const burst = turn.enqueue?.length ? burstOf(turn.enqueue) : undefined;
    if (this.turns)
      return this.turnOnThread(
        this.turns,
        {
          replica,
          runs: nodeRunValues(turn.runs),
          finishes: turn.finishes.map((f) => ({ ...f, error: f.error && JSON.stringify(f.error) })),
          now,
          leaseMs,
          max,
        },
        burst && threadBurst(burst),
      );
    const result = (this.lastTurn.get(replica) ?? Promise.resolve()).then(() =>
      this.durable((db) =>
        db.transaction().execute(async (trx) => {
          // The new executions are stored by the claim, which may take them (claimExecutions); their
          // versions' definitions before, unless a turn committed them already.
          if (burst)
            await storeDefinitions(
              trx,
              burst.definitions.filter((d) => !this.stored.has(versionKey(d))),
            );
          await saveNodeRuns(trx, turn.runs);
          const finished = await finishExecutions(trx, replica, turn.finishes);
          const claimed = await claimExecutions(
            trx,
            replica,
            now,
            leaseMs,
            max,
            burst && {
              rows: burst.rows,
              definitions: new Map(burst.definitions.map((d) => [versionKey(d), d.definition])),
            },
            this.expiredReads,
          );
          return { finished, claimed };
        }),
      ),
    );
    if (burst)
      void result.then(
        () => {
          if (this.stored.size > 10_000) this.stored.clear();
          for (const d of burst.definitions) this.stored.add(versionKey(d));
        },
        () => {},
      );
    const settled = () => {};
    const ended = result.then(settled, settled);
    this.lastTurn.set(replica, ended);
    void ended.then(() => {
      if (this.lastTurn.get(replica) === ended) this.lastTurn.delete(replica);
    });
    return result;
  }

  /** finishAndClaim on the bookkeeping thread (sqlite-engine-thread.ts): the same statements, written out. */
  private async turnOnThread(
    thread: SqliteEngineThread,
    message: TurnMessage,
    burst: EnqueueBurst | undefined,
  ): Promise<{ finished: Set<string>; claimed: ExecutionRow[] }> {
    const answer = await thread.turn(message, burst);
    return {
      finished: new Set(answer.finished),
      claimed: answer.claimed.map((row) => {
        const execution = executionWith(row, answer.definitions[versionKey(row)]!);
        execution.fromQueue = row.fromQueue;
        return execution;
      }),
    };
  }

  async finish(
    id: string,
    replica: string,
    status: ExecutionStatus,
    now: number,
    error: ExecutionRow['error'],
    reason: string | null = null,
  ): Promise<boolean> {
    const result = await this.db
      .updateTable('engine_executions')
      .set({
        status,
        finished_at: now,
        error: error && JSON.stringify(error),
        reason,
        lease_until: null,
        checkpoint: null,
      })
      .where('id', '=', id)
      .where('locked_by', '=', replica)
      .where('status', '=', 'running')
      .executeTakeFirst();
    // False when the lease was lost or the execution cancelled meanwhile: its status stands.
    return Number(result.numUpdatedRows) === 1;
  }

  /**
   * Parks a running execution until `runAt` (a long wait): it holds no lease meanwhile, and any replica
   * claims it when due, also after a restart. False when `replica` no longer held it (cancelled).
   */
  async park(id: string, replica: string, runAt: number, checkpoint: Checkpoint): Promise<boolean> {
    const result = await this.db
      .updateTable('engine_executions')
      .set({
        status: 'waiting',
        run_at: runAt,
        checkpoint: JSON.stringify(checkpoint),
        locked_by: null,
        lease_until: null,
      })
      .where('id', '=', id)
      .where('locked_by', '=', replica)
      .where('status', '=', 'running')
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  async cancelQueued(organizationId: string, pipelineId: string, now: number): Promise<void> {
    await this.db
      .updateTable('engine_executions')
      .set({ status: 'cancelled', reason: 'pipeline_disabled', finished_at: now })
      .where('organization_id', '=', organizationId)
      .where('pipeline_id', '=', pipelineId)
      .where('status', '=', 'queued')
      .execute();
  }

  /**
   * Cancels a queued, waiting or running execution (a running one stops at its next node boundary: its engine's
   * lease renewal and finish find it no longer running). Answers the status it had, or undefined.
   */
  async cancel(organizationId: string, id: string, now: number): Promise<boolean> {
    const result = await this.db
      .updateTable('engine_executions')
      .set({ status: 'cancelled', reason: 'user', finished_at: now, lease_until: null, checkpoint: null })
      .where('organization_id', '=', organizationId)
      .where('id', '=', id)
      .where('status', 'in', ['queued', 'running', 'waiting'])
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  async delete(organizationId: string, id: string): Promise<boolean> {
    const result = await this.db
      .deleteFrom('engine_executions')
      .where('organization_id', '=', organizationId)
      .where('id', '=', id)
      .where('status', 'not in', ['queued', 'running', 'waiting'])
      .executeTakeFirst();
    return Number(result.numDeletedRows) === 1;
  }

  /** Retention per organization (execution-retention.ts); answers how many executions went. */
  purge(now: number, defaults?: RetentionDefaults): Promise<number> {
    return purgeExecutions(this.db, now, defaults);
  }

  /** The executions that retried `id`. */
  async retriesOf(organizationId: string, id: string): Promise<string[]> {
    const rows = await this.db
      .selectFrom('engine_executions')
      .select('id')
      .where('organization_id', '=', organizationId)
      .where('retry_of', '=', id)
      .execute();
    return rows.map((r) => r.id);
  }

  async saveNodeRun(run: NodeRunRow): Promise<void> {
    await saveNodeRuns(this.db, [run]);
  }

  static isFinal(status: ExecutionStatus): boolean {
    return FINAL.includes(status);
  }
}
