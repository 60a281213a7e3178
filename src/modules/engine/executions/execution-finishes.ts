import type { Kysely } from 'kysely';
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
      const rows = await db
        .updateTable('engine_executions')
        .set({
          status,
          reason,
          error: error && JSON.stringify(error),
          lease_until: null,
          checkpoint: null,
          finished_at: numberById(db, times),
        })
        .where(inTextList(db, 'id', [...times.keys()]))
        .where('locked_by', '=', replica)
        .where(statusOf, '=', 'running')
        .returning('id')
        .execute();
      for (const row of rows) finished.add(row.id);
    }
  return finished;
}
