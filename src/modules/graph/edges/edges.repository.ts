import type { Kysely, Selectable } from 'kysely';
import { badRequest, conflict } from '../../../platform/errors.js';
import type { Database, DependencyEdgeTable } from '../../../storage/tables.js';
import { protocolOf } from '../../connections/protocols/protocol-registry.js';
import { lockReferenced } from './entity-locks.js';
import {
  dashboardReferences,
  distinctReferences,
  type EntityType,
  functionReferences,
  modelBindingReferences,
  modelReferences,
  pipelineReferences,
  type Reference,
} from './references.js';

/** What writes edges: each entity type, and model bindings (whose edges go from their model). */
export type EdgeOwnerType = 'connection' | 'function' | 'model' | 'model_binding' | 'pipeline' | 'dashboard';

export type StoredEdge = Selectable<DependencyEdgeTable>;

/**
 * Which extraction wrote the stored edges. Raise it when `references.ts` learns something new (a node
 * type, a member): the next start rebuilds every organization's edges (see `rebuildEdgesIfStale`).
 */
export const EXTRACTION_VERSION = 1;

type Direction = 'read' | 'write' | 'subscribe';

/** The direction of a function type of a protocol, or undefined when either is unknown. */
function directionOf(protocol: string | undefined, type: string): Direction | undefined {
  if (!protocol) return undefined;
  try {
    return protocolOf(protocol).functionTypes.get(type)?.type.direction as Direction | undefined;
  } catch {
    return undefined;
  }
}

interface Extracted {
  organizationId: string;
  from: { type: EntityType; id: string };
  references: Reference[];
  /** False for a disabled pipeline: only an active owner must refer to entities that exist. */
  active: boolean;
}

/** Reads the owners' stored rows (one query) and extracts their references, by owner id; a row that is gone is absent. */
async function extractMany(
  trx: Kysely<Database>,
  type: EdgeOwnerType,
  ids: string[],
): Promise<Map<string, Extracted>> {
  const out = new Map<string, Extracted>();
  if (ids.length === 0) return out;
  switch (type) {
    case 'connection': {
      const rows = await trx
        .selectFrom('connections')
        .select(['id', 'organization_id'])
        .where('id', 'in', ids)
        .execute();
      for (const row of rows)
        out.set(row.id, {
          organizationId: row.organization_id,
          from: { type, id: row.id },
          references: [],
          active: true,
        });
      break;
    }
    case 'function': {
      const rows = await trx
        .selectFrom('connection_functions as f')
        .leftJoin('connections as c', 'c.id', 'f.connection_id')
        .select(['f.id', 'f.organization_id', 'f.connection_id', 'f.type', 'f.uns', 'c.protocol'])
        .where('f.id', 'in', ids)
        .execute();
      for (const row of rows)
        out.set(row.id, {
          organizationId: row.organization_id,
          from: { type, id: row.id },
          references: functionReferences(row, directionOf(row.protocol ?? undefined, row.type)),
          active: true,
        });
      break;
    }
    case 'model': {
      const rows = await trx
        .selectFrom('models')
        .select(['id', 'organization_id', 'fields'])
        .where('id', 'in', ids)
        .execute();
      for (const row of rows)
        out.set(row.id, {
          organizationId: row.organization_id,
          from: { type, id: row.id },
          references: modelReferences(row),
          active: true,
        });
      break;
    }
    case 'model_binding': {
      const rows = await trx.selectFrom('model_bindings').selectAll().where('id', 'in', ids).execute();
      for (const row of rows)
        out.set(row.id, {
          organizationId: row.organization_id,
          from: { type: 'model', id: row.model_id },
          references: modelBindingReferences(row),
          active: true,
        });
      break;
    }
    case 'pipeline': {
      const rows = await trx
        .selectFrom('pipelines')
        .select(['id', 'organization_id', 'nodes', 'enabled'])
        .where('id', 'in', ids)
        .execute();
      for (const row of rows)
        out.set(row.id, {
          organizationId: row.organization_id,
          from: { type, id: row.id },
          references: pipelineReferences(row),
          active: Boolean(row.enabled),
        });
      break;
    }
    case 'dashboard': {
      const rows = await trx
        .selectFrom('dashboards')
        .select(['id', 'organization_id', 'folder_id', 'definition'])
        .where('id', 'in', ids)
        .execute();
      for (const row of rows)
        out.set(row.id, {
          organizationId: row.organization_id,
          from: { type, id: row.id },
          references: dashboardReferences(row),
          active: true,
        });
      break;
    }
  }
  return out;
}

/** Reads the owner's stored row and extracts its references; undefined when the row is gone. */
async function extract(
  trx: Kysely<Database>,
  type: EdgeOwnerType,
  id: string,
): Promise<Extracted | undefined> {
  return (await extractMany(trx, type, [id])).get(id);
}

const toRows = (ownerType: EdgeOwnerType, ownerId: string, e: Extracted): StoredEdge[] =>
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
  ownerType: EdgeOwnerType,
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

/**
 * Before the edges a save adds are written: locks the entities they start to refer to (see
 * entity-locks.ts) and refuses the save when one was deleted by a transaction it waited for (409), or,
 * for an enabled pipeline, when one does not exist (400; a disabled pipeline may refer to what is not
 * there yet, and the graph shows it as missing). References the owner already had are not checked, so
 * an entity deleted with `force=true` does not make its dependents unsaveable.
 */
async function checkNewReferences(
  trx: Kysely<Database>,
  saved: readonly Extracted[],
  before: ReadonlyMap<string, ReadonlySet<string>>,
): Promise<void> {
  const fresh: { owner: Extracted; ref: Reference; key: string }[] = [];
  for (const owner of saved) {
    const had = before.get(owner.from.id);
    for (const ref of owner.references) {
      if (ref.targetType === 'topic' || ref.targetId === null || ref.dynamic) continue;
      const key = `${ref.targetType}:${ref.targetId}`;
      if (!had?.has(key)) fresh.push({ owner, ref, key });
    }
  }
  if (fresh.length === 0) return;
  const byOrg = new Map<string, { type: EntityType; id: string }[]>();
  for (const f of fresh) {
    const list = byOrg.get(f.owner.organizationId) ?? [];
    list.push({ type: f.ref.targetType, id: f.ref.targetId! });
    byOrg.set(f.owner.organizationId, list);
  }
  for (const [organizationId, targets] of byOrg) {
    const state = await lockReferenced(trx, organizationId, targets);
    const of = (key: string) =>
      fresh.find((f) => f.owner.organizationId === organizationId && f.key === key)!;
    const gone = [...state.deletedMeanwhile][0];
    if (gone) {
      const { ref } = of(gone);
      throw conflict(
        `the ${ref.targetType} ${ref.targetId} that '${ref.via}' refers to was deleted while this was being saved; nothing was saved`,
      );
    }
    const missing = fresh.find(
      (f) =>
        f.owner.organizationId === organizationId &&
        state.missing.has(f.key) &&
        f.owner.from.type === 'pipeline' &&
        f.owner.active &&
        !f.ref.disabled,
    );
    if (missing)
      throw badRequest(
        `node '${missing.ref.via}' refers to a ${missing.ref.targetType} the organization does not have (${missing.ref.targetId}); an enabled pipeline can only refer to existing ones`,
      );
  }
}

/**
 * Rewrites the edges of one owner from its stored row, inside the transaction that saved or deleted it
 * (call it after the write): the row's references replace its edges; a row that is gone leaves none.
 * A deleted connection takes its functions' edges with it (they were deleted in the same transaction).
 */
export async function syncEdges(
  trx: Kysely<Database>,
  ownerType: EdgeOwnerType,
  ownerId: string,
): Promise<void> {
  const before = await storedTargets(trx, ownerType, [ownerId]);
  await trx
    .deleteFrom('dependency_edges')
    .where('owner_type', '=', ownerType)
    .where('owner_id', '=', ownerId)
    .execute();
  const extracted = await extract(trx, ownerType, ownerId);
  if (!extracted) {
    if (ownerType === 'connection') {
      const functions = await trx
        .selectFrom('dependency_edges')
        .select('owner_id')
        .where('to_id', '=', ownerId)
        .where('relation', '=', 'belongs-to')
        .where('owner_type', '=', 'function')
        .execute();
      for (const f of functions) await syncEdges(trx, 'function', f.owner_id);
    }
    return;
  }
  await checkNewReferences(trx, [extracted], before);
  await insertRows(trx, toRows(ownerType, ownerId, extracted));
}

/** How many owners one statement of `syncEdgesMany` reads or deletes. */
const OWNER_CHUNK = 200;

/**
 * `syncEdges` for many owners of one type that were all just written (not deleted) in this transaction,
 * in a few statements: one delete and one read per chunk of owners, then multi-row inserts of all edges.
 */
export async function syncEdgesMany(
  trx: Kysely<Database>,
  ownerType: EdgeOwnerType,
  ownerIds: string[],
): Promise<void> {
  const rows: StoredEdge[] = [];
  for (let i = 0; i < ownerIds.length; i += OWNER_CHUNK) {
    const ids = ownerIds.slice(i, i + OWNER_CHUNK);
    const before = await storedTargets(trx, ownerType, ids);
    await trx
      .deleteFrom('dependency_edges')
      .where('owner_type', '=', ownerType)
      .where('owner_id', 'in', ids)
      .execute();
    const extracted = await extractMany(trx, ownerType, ids);
    await checkNewReferences(trx, [...extracted.values()], before);
    for (const id of ids) {
      const e = extracted.get(id);
      if (e) rows.push(...toRows(ownerType, id, e));
    }
  }
  await insertRows(trx, rows);
}

/** Every edge of an organization. */
export function edgesOf(db: Kysely<Database>, organizationId: string): Promise<StoredEdge[]> {
  return db
    .selectFrom('dependency_edges')
    .selectAll()
    .where('organization_id', '=', organizationId)
    .execute();
}

/**
 * Rebuilds every organization's edges when they were written by an older extraction (or never, right
 * after the migration). One replica does it: the version is raised by a conditional update in the
 * same transaction, so a second replica starting at once finds nothing left to do.
 */
export async function rebuildEdgesIfStale(db: Kysely<Database>, now: number): Promise<boolean> {
  return db.transaction().execute(async (trx) => {
    const claimed = await trx
      .updateTable('dependency_graph_state')
      .set({ extraction_version: EXTRACTION_VERSION, rebuilt_at: now })
      .where('id', '=', 1)
      .where('extraction_version', '<', EXTRACTION_VERSION)
      .executeTakeFirst();
    if (Number(claimed.numUpdatedRows) === 0) return false;
    await trx.deleteFrom('dependency_edges').execute();
    const owners: [
      EdgeOwnerType,
      'connection_functions' | 'models' | 'model_bindings' | 'pipelines' | 'dashboards',
    ][] = [
      ['function', 'connection_functions'],
      ['model', 'models'],
      ['model_binding', 'model_bindings'],
      ['pipeline', 'pipelines'],
      ['dashboard', 'dashboards'],
    ];
    for (const [type, table] of owners) {
      const ids = await trx.selectFrom(table).select('id').execute();
      for (const { id } of ids) {
        const extracted = await extract(trx, type, id);
        if (extracted) await insertRows(trx, toRows(type, id, extracted));
      }
    }
    return true;
  });
}
