import { type Expression, type Kysely, type SqlBool, sql } from 'kysely';
import type { Database, EngineExecutionTable } from '../../../storage/tables.js';
import { insertAsArrays, inTextList, isPostgres, powerOfTwoSlices } from '../../../storage/value-lists.js';
import { definitionTexts, versionKey } from './execution-definitions.js';
import { definitionOf, type ExecutionRow, executionWith } from './execution-rows.js';
import type { ExpiredLeaseReads } from './expired-lease-reads.js';

/** The columns a claim answers: all but the definition. */
export const CLAIMED_COLUMNS = [
  'id',
  'organization_id',
  'pipeline_id',
  'pipeline_version',
  'status',
  'reason',
  'trigger',
  'input',
  'error',
  'priority',
  'run_at',
  'locked_by',
  'lease_until',
  'claims',
  'idempotency_key',
  'retry_of',
  'queued_at',
  'started_at',
  'finished_at',
  'checkpoint',
  'trigger_type',
] as const satisfies readonly Exclude<keyof EngineExecutionTable, 'definition'>[];

/**
 * Statuses as literals in the claim's reads: the engine's indexes are partial (migration 0023), and a
 * planner uses one only when the query's condition names the same status, which a parameter does not.
 */
const QUEUED = sql.lit<ExecutionRow['status']>('queued');
const RUNNING = sql.lit<ExecutionRow['status']>('running');
const WAITING = sql.lit<ExecutionRow['status']>('waiting');

/**
 * The status as an expression no index can answer: for updates of rows named by id, so that SQLite looks
 * each up by its key. Without statistics, its planner takes `status = ?` for the narrower condition and
 * walks every queued (or running) row instead, for each id of the list: a claim cost grew with the queue.
 */
export const statusOf = sql<ExecutionRow['status']>`coalesce(status, '')`;

/**
 * The claim of the executions `ids` selects that are still claimable (queued, or running with their
 * lease over, or waiting with their time come): written once, for claimExecutions and for the
 * bookkeeping thread (sqlite-engine-thread.ts), which runs it an execution at a time.
 */
export function claimUpdate(
  db: Kysely<Database>,
  claim: { replica: string; leaseUntil: number; now: number },
  ids: Expression<SqlBool>,
) {
  const { replica, leaseUntil, now } = claim;
  return db
    .updateTable('engine_executions')
    .set((eb) => ({
      status: 'running',
      locked_by: replica,
      lease_until: leaseUntil,
      claims: eb('claims', '+', 1),
      started_at: eb.fn.coalesce('started_at', eb.val(now)),
    }))
    .where(ids)
    .where((eb) =>
      eb.or([
        eb(statusOf, '=', 'queued'),
        eb.and([eb(statusOf, '=', 'running'), eb('lease_until', '<', now)]),
        eb.and([eb(statusOf, '=', 'waiting'), eb('run_at', '<=', now)]),
      ]),
    );
}

/** Marks the executions `ids` selects as skipped for overlap, those still queued (as the bookkeeping thread does too). */
export function skipUpdate(db: Kysely<Database>, now: number, ids: Expression<SqlBool>) {
  return db
    .updateTable('engine_executions')
    .set({ status: 'skipped', reason: 'overlap', finished_at: now })
    .where(ids)
    .where(statusOf, '=', 'queued');
}

/** What a claim reads of its candidates: not the definition, which is the same for a pipeline version. */
const CANDIDATE_COLUMNS = [
  'id',
  'status',
  'pipeline_id',
  'pipeline_version',
  'priority',
  'queued_at',
] as const;
type Candidate = Pick<EngineExecutionTable, (typeof CANDIDATE_COLUMNS)[number]>;

/** Each column's SQL type on PostgreSQL (insertAsArrays). */
const EXECUTION_TYPES: { readonly [C in keyof EngineExecutionTable]: string } = {
  id: 'text',
  organization_id: 'text',
  pipeline_id: 'text',
  pipeline_version: 'integer',
  definition: 'text',
  status: 'text',
  reason: 'text',
  trigger: 'text',
  input: 'text',
  error: 'text',
  priority: 'integer',
  run_at: 'bigint',
  locked_by: 'text',
  lease_until: 'bigint',
  claims: 'integer',
  idempotency_key: 'text',
  retry_of: 'text',
  queued_at: 'bigint',
  started_at: 'bigint',
  finished_at: 'bigint',
  checkpoint: 'text',
  trigger_type: 'text',
};

/** Inserts execution rows: on PostgreSQL in one statement (insertAsArrays), on SQLite 256 at most a statement. */
export async function insertExecutionRows(
  db: Kysely<Database>,
  rows: readonly EngineExecutionTable[],
): Promise<void> {
  if (rows.length === 0) return;
  if (isPostgres(db)) await insertAsArrays(db, 'engine_executions', EXECUTION_TYPES, rows);
  else
    for (const slice of powerOfTwoSlices(rows))
      await db.insertInto('engine_executions').values(slice).execute();
}

/**
 * New executions a bookkeeping turn stores (ExecutionsRepository.finishAndClaim), as rows queued (or
 * skipped already), and the definition text of their versions by versionKey (stored before the claim).
 */
export interface NewExecutions {
  rows: readonly EngineExecutionTable[];
  definitions: ReadonlyMap<string, string>;
}

/** The columns of a part of readCandidates' union that answers candidates: theirs, the part, no count. */
const candidatePart = (part: number) =>
  [
    ...CANDIDATE_COLUMNS,
    sql<number>`${sql.lit(part)}`.as('part'),
    sql<number | null>`cast(null as bigint)`.as('n'),
  ] as const;

/**
 * What a claim reads, in one statement: the executions to resume first (a replica died in them, or their
 * wait is over), then the queue, in claim order, each up to `limit` (each read walks an index in the order
 * it answers and stops there, so a claim costs the same whatever the queue's length); and the running
 * count of the pipelines of those queued, and of `pipelines` (the new executions'). These were three
 * reads, one after the other, each answer waiting for a turn of the event loop: in the pipeline bench on
 * PostgreSQL, with the loop busy running executions, they took ~9 ms of a bookkeeping turn of ~30,
 * PostgreSQL answering each in under a millisecond.
 *
 * Those to resume are the longest expired leases and the longest due waits, each in its index's order,
 * then put in claim order here; expired leases only when `expired` is true (expired-lease-reads.ts).
 */
async function readCandidates(
  db: Kysely<Database>,
  now: number,
  limit: number,
  pipelines: readonly string[],
  expired: boolean,
): Promise<{ resumable: Candidate[]; due: Candidate[]; running: Map<string, number> }> {
  const rows = await db
    .with('expired', (qb) =>
      qb
        .selectFrom('engine_executions')
        .select(CANDIDATE_COLUMNS)
        .where('status', '=', RUNNING)
        .where('lease_until', '<', now)
        // Not read: a condition the planner knows false, so the statement reads nothing for this part.
        .$if(!expired, (qb) => qb.where(sql<boolean>`false`))
        .orderBy('lease_until')
        .limit(limit),
    )
    .with('waited', (qb) =>
      qb
        .selectFrom('engine_executions')
        .select(CANDIDATE_COLUMNS)
        .where('status', '=', WAITING)
        .where('run_at', '<=', now)
        .orderBy('run_at')
        .limit(limit),
    )
    // A queued execution is due when queued (run_at is its queue time), so the read needs no time
    // condition and walks engine_executions_queued_idx in order.
    .with('due', (qb) =>
      qb
        .selectFrom('engine_executions')
        .select(CANDIDATE_COLUMNS)
        .where('status', '=', QUEUED)
        .orderBy('priority')
        .orderBy('queued_at')
        .limit(limit),
    )
    .selectFrom('expired')
    .select(candidatePart(0))
    .unionAll((qb) => qb.selectFrom('waited').select(candidatePart(0)))
    .unionAll((qb) => qb.selectFrom('due').select(candidatePart(1)))
    .unionAll((qb) =>
      qb
        .selectFrom('engine_executions')
        .select((eb) => [
          sql<string>`''`.as('id'),
          sql<ExecutionRow['status']>`''`.as('status'),
          'pipeline_id',
          sql<number>`0`.as('pipeline_version'),
          sql<number>`0`.as('priority'),
          sql<number>`0`.as('queued_at'),
          sql<number>`2`.as('part'),
          eb.fn.countAll<number>().as('n'),
        ])
        .where('status', '=', RUNNING)
        .where('lease_until', '>=', now)
        .where((eb) =>
          eb.or([
            eb('pipeline_id', 'in', eb.selectFrom('due').select('pipeline_id')),
            inTextList(db, 'pipeline_id', [...new Set(pipelines)]),
          ]),
        )
        .groupBy('pipeline_id'),
    )
    .execute();
  const resumable: Candidate[] = [];
  const due: Candidate[] = [];
  const running = new Map<string, number>();
  for (const row of rows) {
    const part = Number(row.part);
    if (part === 2) running.set(row.pipeline_id, Number(row.n));
    else (part === 0 ? resumable : due).push(row);
  }
  // Each part in claim order (a union of ordered parts is not ordered as a whole); of those to resume,
  // `limit` at most, as the queue.
  resumable.sort(inQueueOrder);
  due.sort(inQueueOrder);
  return { resumable: resumable.slice(0, limit), due, running };
}

/** Whether `a` comes before `b` in the queue: higher priority (a lower number), then queued earlier. */
const ahead = (a: Candidate, b: Candidate) =>
  Number(a.priority) < Number(b.priority) ||
  (Number(a.priority) === Number(b.priority) && Number(a.queued_at) < Number(b.queued_at));

/** `ahead` as a sort's comparison. */
const inQueueOrder = (a: Candidate, b: Candidate) => (ahead(a, b) ? -1 : ahead(b, a) ? 1 : 0);

/**
 * Claims up to `max` executions for `replica` in two statements whatever their number: one read of the
 * due candidates and the running count of their pipelines (readCandidates; overlap: `parallel` allows
 * `max` running executions of a pipeline; `queue` (and for now `restart`) one, the others wait; `skip`
 * records the newcomer as skipped), then one conditional update of the chosen rows. The update changes only rows
 * still claimable, so a row another replica claimed meanwhile is not answered here: once-only on both
 * databases.
 *
 * `fresh`, new executions of the same transaction, are stored here, among the candidates in queue order:
 * one the claim takes is inserted running, one it skips as skipped, the others queued. Inserted queued
 * and then claimed, each was written twice: on PostgreSQL an update writes a new copy of the row and an
 * entry in each of its indexes, ~18 µs of the server a row. No other replica sees them before the
 * commit, so the claim of these needs no condition.
 *
 * With `expiredReads`, executions whose lease expired are looked for when it says (ExpiredLeaseReads);
 * without, at every claim.
 */
export async function claimExecutions(
  db: Kysely<Database>,
  replica: string,
  now: number,
  leaseMs: number,
  max: number,
  fresh: NewExecutions = { rows: [], definitions: new Map() },
  expiredReads?: ExpiredLeaseReads,
): Promise<ExecutionRow[]> {
  if (max <= 0) {
    await insertExecutionRows(db, fresh.rows);
    return [];
  }
  const limit = Math.max(20, max * 2);
  const expired = expiredReads?.due(replica, now, leaseMs) ?? true;
  const {
    resumable,
    due: read,
    running,
  } = await readCandidates(
    db,
    now,
    limit,
    fresh.rows.filter((row) => row.status === 'queued').map((row) => row.pipeline_id),
    expired,
  );
  if (expired)
    expiredReads?.read(
      replica,
      now,
      resumable.some((c) => c.status === 'running'),
    );
  const due = read.slice(0, limit - resumable.length);
  // The new ones join the stored in queue order (after those of the same place); if the read stopped at
  // its limit, stored executions it did not reach may come before any new one after its last row.
  const full = resumable.length + due.length >= limit;
  const last = due.at(-1);
  const newcomers = fresh.rows
    .filter((row) => row.status === 'queued' && (!full || (last !== undefined && ahead(row, last))))
    .sort(inQueueOrder);
  const queue: Candidate[] = [];
  for (let i = 0, j = 0; i < due.length || j < newcomers.length; )
    queue.push(
      j >= newcomers.length || (i < due.length && !ahead(newcomers[j]!, due[i]!))
        ? due[i++]!
        : newcomers[j++]!,
    );
  const candidates = [...resumable, ...queue];
  if (candidates.length === 0) {
    await insertExecutionRows(db, fresh.rows);
    return [];
  }
  const isNew = new Set(newcomers.map((row) => row.id));
  const definitions = await definitionTexts(
    db,
    candidates.filter((c) => !isNew.has(c.id)),
  );
  for (const [key, text] of fresh.definitions) definitions.set(key, text);
  const chosen: string[] = [];
  const skipped = new Set<string>();
  for (const candidate of candidates) {
    if (chosen.length >= max) break;
    const definition = definitions.get(versionKey(candidate));
    // Never without one (definitions are never deleted); if one were lost, the others still run.
    if (definition === undefined) continue;
    if (candidate.status === 'queued') {
      const { mode, max: parallel } = definitionOf(
        candidate.pipeline_id,
        candidate.pipeline_version,
        definition,
      ).settings.concurrency;
      const limit = mode === 'parallel' ? parallel : 1;
      const busy = (running.get(candidate.pipeline_id) ?? 0) >= limit;
      if (busy && mode === 'skip') skipped.add(candidate.id);
      if (busy) continue;
      running.set(candidate.pipeline_id, (running.get(candidate.pipeline_id) ?? 0) + 1);
    }
    chosen.push(candidate.id);
  }
  const taken = new Set(chosen);
  const claimedNew: EngineExecutionTable[] = [];
  await insertExecutionRows(
    db,
    fresh.rows.map((row): EngineExecutionTable => {
      if (taken.has(row.id)) {
        const claimed: EngineExecutionTable = {
          ...row,
          status: 'running',
          locked_by: replica,
          lease_until: now + leaseMs,
          claims: 1,
        };
        claimed.started_at ??= now;
        claimedNew.push(claimed);
        return claimed;
      }
      return skipped.has(row.id) ? { ...row, status: 'skipped', reason: 'overlap', finished_at: now } : row;
    }),
  );
  const skippedStored = [...skipped].filter((id) => !isNew.has(id));
  if (skippedStored.length > 0) await skipUpdate(db, now, inTextList(db, 'id', skippedStored)).execute();
  const chosenStored = chosen.filter((id) => !isNew.has(id));
  const claimed =
    chosenStored.length === 0
      ? []
      : await claimUpdate(
          db,
          { replica, leaseUntil: now + leaseMs, now },
          // The list is one parameter: the statement's text is the same whatever the number claimed.
          inTextList(db, 'id', chosenStored),
        )
          // Every column but the definition, which is read once per pipeline version.
          .returning(CLAIMED_COLUMNS)
          .execute();
  // In the order chosen (priority, then age).
  const order = new Map(chosen.map((id, i) => [id, i]));
  const byId = new Map(candidates.map((c) => [c.id, c]));
  return [...claimed, ...claimedNew]
    .map((row) => {
      const candidate = byId.get(row.id)!;
      const execution = executionWith(row, definitions.get(versionKey(row))!);
      // No other claim came between the read and the update: this is the execution's first.
      execution.fromQueue = candidate.status === 'queued' && Number(row.claims) === 1;
      return execution;
    })
    .sort((a, b) => order.get(a.id)! - order.get(b.id)!);
}
