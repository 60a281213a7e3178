import { type Kysely, sql } from 'kysely';
import type { Database, EngineNodeRunTable } from '../../../storage/tables.js';
import { insertAsArrays, isPostgres, powerOfTwoSlices } from '../../../storage/value-lists.js';
import type { NodeRunRow } from './execution-rows.js';

/** The stored row of a node run. */
function nodeRunRow(run: NodeRunRow): EngineNodeRunTable {
  return {
    id: run.id,
    execution_id: run.executionId,
    node_id: run.nodeId,
    node_name: run.nodeName,
    type: run.type,
    run_index: run.runIndex,
    status: run.status,
    port: run.port,
    attempts: JSON.stringify(run.attempts),
    input: run.input === undefined ? null : JSON.stringify(run.input),
    output: run.output === undefined ? null : JSON.stringify(run.output),
    error: run.error && JSON.stringify(run.error),
    started_at: run.startedAt,
    finished_at: run.finishedAt,
    duration_ms: run.durationMs,
    iteration: run.iteration,
    iteration_key: run.iterationKey,
    side_effect: run.sideEffect ?? null,
    seq: run.seq ?? 0,
  };
}

/** Every column a later save of a run changes (all but its id and execution). */
export const RUN_COLUMNS = [
  'node_id',
  'node_name',
  'type',
  'run_index',
  'status',
  'port',
  'attempts',
  'input',
  'output',
  'error',
  'started_at',
  'finished_at',
  'duration_ms',
  'iteration',
  'iteration_key',
  'side_effect',
  'seq',
] as const satisfies readonly Exclude<keyof EngineNodeRunTable, 'id' | 'execution_id'>[];

/** Each column's SQL type on PostgreSQL (insertAsArrays), in the stored row's order. */
const RUN_TYPES: { readonly [C in keyof EngineNodeRunTable]: string } = {
  id: 'text',
  execution_id: 'text',
  node_id: 'text',
  node_name: 'text',
  type: 'text',
  run_index: 'integer',
  status: 'text',
  port: 'text',
  attempts: 'text',
  input: 'text',
  output: 'text',
  error: 'text',
  started_at: 'bigint',
  finished_at: 'bigint',
  duration_ms: 'integer',
  iteration: 'integer',
  iteration_key: 'text',
  side_effect: 'text',
  seq: 'integer',
};

/**
 * How a save of a run already stored changes it: every column but its id and execution, unless the
 * stored run is marked as a device write and the save is not (a copy saved before the mark, stored later
 * with a turn, never takes the mark away). The bookkeeping thread's statement ends the same way.
 */
export const RUN_CONFLICT =
  `on conflict (id) do update set ${RUN_COLUMNS.map((c) => `${c} = excluded.${c}`).join(', ')} ` +
  "where engine_node_runs.side_effect is null or engine_node_runs.side_effect != 'writes-device' " +
  "or excluded.side_effect = 'writes-device'";

/** The last save of each run (several saves of one run come in the order they were made), as rows. */
function lastSaves(runs: readonly NodeRunRow[]): EngineNodeRunTable[] {
  const last = new Map<string, NodeRunRow>();
  for (const run of runs) last.set(run.id, run);
  return [...last.values()].map(nodeRunRow);
}

/** The last save of each run as values: id, execution id, then RUN_COLUMNS (sqlite-engine-thread.ts). */
export function nodeRunValues(runs: readonly NodeRunRow[]): unknown[][] {
  return lastSaves(runs).map((row) => [row.id, row.execution_id, ...RUN_COLUMNS.map((c) => row[c])]);
}

/**
 * Inserts or updates node runs (RUN_CONFLICT); of several saves of one run (they come in the order they
 * were made) the last is stored, as one statement may not change a row twice on PostgreSQL. There, one
 * statement whatever their number (insertAsArrays); on SQLite (in memory: a file's go to the bookkeeping
 * thread), 256 at most a statement.
 */
export async function saveNodeRuns(db: Kysely<Database>, runs: NodeRunRow[]): Promise<void> {
  if (runs.length === 0) return;
  const rows = lastSaves(runs);
  const conflict = sql.raw(RUN_CONFLICT);
  if (isPostgres(db)) {
    await insertAsArrays(db, 'engine_node_runs', RUN_TYPES, rows, conflict);
    return;
  }
  const columns = Object.keys(RUN_TYPES) as (keyof EngineNodeRunTable)[];
  for (const slice of powerOfTwoSlices(rows)) {
    const values = slice.map((row) => sql`(${sql.join(columns.map((c) => row[c]))})`);
    await sql`insert into engine_node_runs (${sql.join(columns.map((c) => sql.ref(c)))}) values ${sql.join(values)} ${conflict}`.execute(
      db,
    );
  }
}
