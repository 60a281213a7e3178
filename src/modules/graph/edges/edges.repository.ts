import type { Kysely, Selectable } from 'kysely';
import { badRequest, conflict } from '../../../platform/errors.js';
import type { Database, DependencyEdgeTable } from '../../../storage/tables.js';
import type { EdgeOwner, EntityKinds, Extracted } from '../kinds/entity-kinds.js';
import { lockReferenced } from './entity-locks.js';
import { distinctReferences, type Reference } from './references.js';

export type StoredEdge = Selectable<DependencyEdgeTable>;

/**
 * Which extraction wrote the stored edges. Raise it when a kind's references learn something new (a
 * node type, a member): the next start rebuilds every organization's edges (see `rebuildIfStale`).
 */
export const EXTRACTION_VERSION = 1;

const toRows = (ownerType: string, ownerId: string, e: Extracted): StoredEdge[] =>
  distinctReferences(e.references).map((r, seq) => ({
    organization_id: e.organizationId,
    owner_type: ownerType,
    owner_id: ownerId,
    seq,
    from_type: e.from.type,
    from_id: e.from.id,
    relation: r.kind,
    to_type: r.targetType,
    to_id: r.targetId,
    to_filter: r.filter ? 1 : 0,
    via: r.via.slice(0, 1024),
    path: r.path.slice(0, 1024),
    dynamic: r.dynamic ? 1 : 0,
    disabled: r.disabled ? 1 : 0,
    expression: r.expression?.slice(0, 2048) ?? null,
    pinned_version: r.version ?? null,
  }));

async function insertRows(trx: Kysely<Database>, rows: StoredEdge[]): Promise<void> {
  for (let i = 0; i < rows.length; i += 100) {
    await trx
      .insertInto('dependency_edges')
      .values(rows.slice(i, i + 100))
      .execute();
  }
}

/** The targets (`<type>:<id>`, entities only) of the stored edges of each owner, before a save rewrites them. */
async function storedTargets(
  trx: Kysely<Database>,
  ownerType: string,
  ownerIds: string[],
): Promise<Map<string, Set<string>>> {
  const out = new Map<string, Set<string>>();
  if (ownerIds.length === 0) return out;
  const rows = await trx
    .selectFrom('dependency_edges')
    .select(['owner_id', 'to_type', 'to_id'])
    .where('owner_type', '=', ownerType)
    .where('owner_id', 'in', ownerIds)
    .where('to_type', '!=', 'topic')
    .execute();
  for (const r of rows) {
    const set = out.get(r.owner_id) ?? new Set<string>();
    set.add(`${r.to_type}:${r.to_id}`);
    out.set(r.owner_id, set);
  }
  return out;
}

/** How many owners one statement of `syncMany` reads or deletes. */
const OWNER_CHUNK = 200;

/**
 * The stored edges of every owner: rewritten from the owner's row inside the transaction that saved
 * or deleted it, each owner read through its registered kind.
 */
export class DependencyEdges {
  constructor(private readonly kinds: EntityKinds) {}

  /**
   * Before the edges a save adds are written: locks the entities they start to refer to (see
   * entity-locks.ts) and refuses the save when one was deleted by a transaction it waited for (409), or,
   * for an active owner whose kind refuses missing targets (an enabled pipeline), when one does not exist
   * (400; a disabled pipeline may refer to what is not there yet, and the graph shows it as missing).
   * References the owner already had are not checked, so an entity deleted with `force=true` does not
   * make its dependents unsaveable.
   */
  private async checkNewReferences(
    trx: Kysely<Database>,
    owner: EdgeOwner,
    saved: readonly Extracted[],
    before: ReadonlyMap<string, ReadonlySet<string>>,
  ): Promise<void> {
    const fresh: { owner: Extracted; ref: Reference; key: string }[] = [];
    for (const extracted of saved) {
      const had = before.get(extracted.from.id);
      for (const ref of extracted.references) {
        if (ref.targetType === 'topic' || ref.targetId === null || ref.dynamic) continue;
        const key = `${ref.targetType}:${ref.targetId}`;
        if (!had?.has(key)) fresh.push({ owner: extracted, ref, key });
      }
    }
    if (fresh.length === 0) return;
    const byOrg = new Map<string, { type: string; id: string }[]>();
    for (const f of fresh) {
      const list = byOrg.get(f.owner.organizationId) ?? [];
      list.push({ type: f.ref.targetType, id: f.ref.targetId! });
      byOrg.set(f.owner.organizationId, list);
    }
    for (const [organizationId, targets] of byOrg) {
      const state = await lockReferenced(trx, this.kinds, organizationId, targets);
      const of = (key: string) =>
        fresh.find((f) => f.owner.organizationId === organizationId && f.key === key)!;
      const gone = [...state.deletedMeanwhile][0];
      if (gone) {
        const { ref } = of(gone);
        throw conflict(
          `the ${ref.targetType} ${ref.targetId} that '${ref.via}' refers to was deleted while this was being saved; nothing was saved`,
        );
      }
      if (!owner.refuseMissing) continue;
      const missing = fresh.find(
        (f) =>
          f.owner.organizationId === organizationId &&
          state.missing.has(f.key) &&
          f.owner.active &&
          !f.ref.disabled,
      );
      if (missing) throw badRequest(owner.refuseMissing(missing.ref));
    }
  }

  /**
   * Rewrites the edges of one owner from its stored row, inside the transaction that saved or deleted it
   * (call it after the write): the row's references replace its edges; a row that is gone leaves none.
   * A deleted owner takes its parts' edges with it (a connection's functions, deleted in the same transaction).
   */
  async sync(trx: Kysely<Database>, ownerType: string, ownerId: string): Promise<void> {
    const owner = this.kinds.owner(ownerType);
    const before = await storedTargets(trx, ownerType, [ownerId]);
    await trx
      .deleteFrom('dependency_edges')
      .where('owner_type', '=', ownerType)
      .where('owner_id', '=', ownerId)
      .execute();
    const extracted = (await owner.extract(trx, [ownerId])).get(ownerId);
    if (!extracted) {
      for (const part of owner.parts ?? []) {
        const parts = await trx
          .selectFrom('dependency_edges')
          .select('owner_id')
          .where('to_id', '=', ownerId)
          .where('relation', '=', 'belongs-to')
          .where('owner_type', '=', part)
          .execute();
        for (const p of parts) await this.sync(trx, part, p.owner_id);
      }
      return;
    }
    await this.checkNewReferences(trx, owner, [extracted], before);
    await insertRows(trx, toRows(ownerType, ownerId, extracted));
  }

  /**
   * `sync` for many owners of one type that were all just written (not deleted) in this transaction,
   * in a few statements: one delete and one read per chunk of owners, then multi-row inserts of all edges.
   */
  async syncMany(trx: Kysely<Database>, ownerType: string, ownerIds: readonly string[]): Promise<void> {
    const owner = this.kinds.owner(ownerType);
    const rows: StoredEdge[] = [];
    for (let i = 0; i < ownerIds.length; i += OWNER_CHUNK) {
      const ids = ownerIds.slice(i, i + OWNER_CHUNK);
      const before = await storedTargets(trx, ownerType, ids);
      await trx
        .deleteFrom('dependency_edges')
        .where('owner_type', '=', ownerType)
        .where('owner_id', 'in', ids)
        .execute();
      const extracted = await owner.extract(trx, ids);
      await this.checkNewReferences(trx, owner, [...extracted.values()], before);
      for (const id of ids) {
        const e = extracted.get(id);
        if (e) rows.push(...toRows(ownerType, id, e));
      }
    }
    await insertRows(trx, rows);
  }

  /**
   * Rebuilds every organization's edges when they were written by an older extraction (or never, right
   * after the migration). One replica does it: the version is raised by a conditional update in the
   * same transaction, so a second replica starting at once finds nothing left to do.
   */
  async rebuildIfStale(db: Kysely<Database>, now: number): Promise<boolean> {
    return db.transaction().execute(async (trx) => {
      const claimed = await trx
        .updateTable('dependency_graph_state')
        .set({ extraction_version: EXTRACTION_VERSION, rebuilt_at: now })
        .where('id', '=', 1)
        .where('extraction_version', '<', EXTRACTION_VERSION)
        .executeTakeFirst();
      if (Number(claimed.numUpdatedRows) === 0) return false;
      await trx.deleteFrom('dependency_edges').execute();
      for (const owner of this.kinds.allOwners()) {
        const ids = await trx.selectFrom(owner.table).select('id').execute();
        for (const { id } of ids) {
          const extracted = (await owner.extract(trx, [id])).get(id);
          if (extracted) await insertRows(trx, toRows(owner.ownerType, id, extracted));
        }
      }
      return true;
    });
  }
}

/** Every edge of an organization. */
export function edgesOf(db: Kysely<Database>, organizationId: string): Promise<StoredEdge[]> {
  return db
    .selectFrom('dependency_edges')
    .selectAll()
    .where('organization_id', '=', organizationId)
    .execute();
}
