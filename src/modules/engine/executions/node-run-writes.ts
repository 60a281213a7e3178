import type { Kysely } from 'kysely';
import type { Database, EngineNodeRunTable } from '../../../storage/tables.js';
import { powerOfTwoSlices } from '../../../storage/value-lists.js';
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
 * Inserts or updates node runs, 500 a statement; of several saves of one run (they come in the order
 * they were made) the last is stored, as one statement may not change a row twice on PostgreSQL.
 */
export async function saveNodeRuns(db: Kysely<Database>, runs: NodeRunRow[]): Promise<void> {
  if (runs.length === 0) return;
  const rows = lastSaves(runs);
  for (const slice of powerOfTwoSlices(rows))
    await db
      .insertInto('engine_node_runs')
      .values(slice)
      .onConflict((oc) =>
        oc
          .column('id')
          .doUpdateSet((eb) => Object.fromEntries(RUN_COLUMNS.map((c) => [c, eb.ref(`excluded.${c}`)])))
          // A run marked as a device write changes only by a save that says so too: a copy saved
          // before the mark (stored later, with a turn) never takes the mark away.
          .where((eb) =>
            eb.or([
              eb('engine_node_runs.side_effect', 'is', null),
              eb('engine_node_runs.side_effect', '!=', 'writes-device'),
              eb('excluded.side_effect', '=', 'writes-device'),
            ]),
          ),
      )
      .execute();
}
