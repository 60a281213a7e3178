import type { Kysely } from 'kysely';
import type { Database } from '../../../storage/tables.js';
import { isPostgres } from '../../../storage/value-lists.js';
import type { EntityKinds, EntityTable } from '../kinds/entity-kinds.js';

/**
 * Row locks that make "refuse a delete while something depends on it" hold against concurrent saves.
 *
 * PostgreSQL (READ COMMITTED): the transaction that deletes or stops an entity first takes its row
 * `FOR UPDATE` (`lockForChange`), then reads the edges; a save that adds an edge to an entity takes the
 * target's row `FOR KEY SHARE` (`lockReferenced`) before writing the edge. The two locks conflict, so either
 * the save commits first (the delete's next statement then sees its edge and answers 409) or the save
 * waits for the delete and finds the row gone (a clean 409, and its transaction, edge included, rolls
 * back). `FOR KEY SHARE` does not conflict with ordinary updates of the target, nor with other saves.
 *
 * SQLite: the storage has one connection and every transaction begins IMMEDIATE (sqlite-driver.ts), so
 * transactions that write never interleave: the check inside the delete's transaction sees every save
 * committed before it, and a later save sees the row gone. The locks are no-ops there.
 *
 * Each kind names its table (`EntityKind.table`); a kind without one (topics) has nothing to lock.
 */

/** Locks an entity's row (of `table`) until the end of the transaction that deletes or stops it (PostgreSQL). */
export async function lockForChange(
  trx: Kysely<Database>,
  table: EntityTable | undefined,
  id: string,
): Promise<void> {
  if (!table || !isPostgres(trx)) return;
  // Kysely cannot type a column set shared by a union of tables, hence the cast (every one has `id`).
  await trx
    .selectFrom(table as 'models')
    .select('id')
    .where('id', '=', id)
    .forUpdate()
    .execute();
}

export interface ReferencedState {
  /** `<type>:<id>` of targets the organization does not have (never had, or deleted before this save). */
  missing: Set<string>;
  /** Targets that were there when this save looked and were deleted by a transaction it waited for. */
  deletedMeanwhile: Set<string>;
}

/**
 * Locks the rows a save is about to refer to (new edges only) and tells which are missing. On
 * PostgreSQL a plain read first tells what exists now; the locking read then waits for any delete in
 * flight, so a row seen by the first and absent from the second was deleted meanwhile.
 */
export async function lockReferenced(
  trx: Kysely<Database>,
  kinds: EntityKinds,
  organizationId: string,
  targets: readonly { type: string; id: string }[],
): Promise<ReferencedState> {
  const state: ReferencedState = { missing: new Set(), deletedMeanwhile: new Set() };
  const byType = new Map<string, Set<string>>();
  for (const t of targets) {
    if (!kinds.of(t.type).table) continue;
    const ids = byType.get(t.type) ?? new Set<string>();
    ids.add(t.id);
    byType.set(t.type, ids);
  }
  const postgres = isPostgres(trx);
  for (const [type, idSet] of byType) {
    const ids = [...idSet];
    const query = () =>
      trx
        .selectFrom(kinds.of(type).table as 'models')
        .select('id')
        .where('organization_id', '=', organizationId)
        .where('id', 'in', ids);
    const seen = new Set((await query().execute()).map((r) => r.id));
    // Sorted, so that two saves lock in the same order (key-share locks do not conflict anyway).
    const locked = postgres
      ? new Set((await query().orderBy('id').forKeyShare().execute()).map((r) => r.id))
      : seen;
    for (const id of ids) {
      if (locked.has(id)) continue;
      (seen.has(id) ? state.deletedMeanwhile : state.missing).add(`${type}:${id}`);
    }
  }
  return state;
}
