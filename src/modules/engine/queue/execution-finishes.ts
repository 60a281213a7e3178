import type { Expression, Kysely, SqlBool } from 'kysely';
import type { Database } from '../../../storage/tables.js';
import { inTextList, numberById } from '../../../storage/value-lists.js';
import { statusOf } from './execution-claims.js';
import type { ExecutionRow } from './execution-rows.js';

/** How one execution ended, to be recorded by its replica (ExecutionEngine's bookkeeping turn). */
export interface FinishRecord {
  id: string;
  status: ExecutionRow['status'];
  finishedAt: number;
  error: ExecutionRow['error'];
  reason: string | null;
}

/**
 * The update that records one kind of end of the executions `ids` selects, those `replica` still holds:
 * written once, for finishExecutions and for the bookkeeping thread (sqlite-engine-thread.ts), which
 * runs it an execution at a time. `finishedAt` is a time, or an expression of the row's own time.
 */
export function finishUpdate(
  db: Kysely<Database>,
  replica: string,
  end: {
    status: string;
    reason: string | null;
    error: string | null;
    finishedAt: number | Expression<number>;
  },
  ids: Expression<SqlBool>,
) {
  return db
    .updateTable('engine_executions')
    .set({
      status: end.status as ExecutionRow['status'],
      reason: end.reason,
      error: end.error,
      lease_until: null,
      checkpoint: null,
      finished_at: end.finishedAt,
    })
    .where(ids)
    .where('locked_by', '=', replica)
    .where(statusOf, '=', 'running');
}

/**
 * Records the ends of executions `replica` still holds, one statement per kind of end (status, reason
 * and error; most are `completed` with neither), each row keeping its own finish time. A row the
 * replica no longer holds (its lease was lost, it was cancelled) is left as it is. Answers the ids
 * recorded.
 */
export async function finishExecutions(
  db: Kysely<Database>,
  replica: string,
  finishes: FinishRecord[],
): Promise<Set<string>> {
  const finished = new Set<string>();
  const groups = new Map<string, FinishRecord[]>();
  for (const f of finishes) {
    const key = JSON.stringify([f.status, f.reason, f.error]);
    const group = groups.get(key);
    if (group) group.push(f);
    else groups.set(key, [f]);
  }
  for (const group of groups.values())
    for (let i = 0; i < group.length; i += 500) {
      const chunk = group.slice(i, i + 500);
      const { status, reason, error } = chunk[0]!;
      // Each row gets its own finish time from one parameter: the statement's text is always the same.
      const times = new Map(chunk.map((f) => [f.id, f.finishedAt]));
      const rows = await finishUpdate(
        db,
        replica,
        { status, reason, error: error && JSON.stringify(error), finishedAt: numberById(db, times) },
        inTextList(db, 'id', [...times.keys()]),
      )
        .returning('id')
        .execute();
      for (const row of rows) finished.add(row.id);
    }
  return finished;
}
