import type { Kysely } from 'kysely';
import { conflict } from '../../platform/errors.js';
import type { Database } from '../../storage/tables.js';
import type {
  ChangeSummary,
  ChangeType,
  EntityVersionsRepository,
  RecordVersion,
} from './entity-versions.repository.js';
import type { EdgeWriter, Stamp, VersionedRow, VersionedRows } from './versioned-rows.js';

/** The version a row records. */
export function versionOf<Row extends VersionedRow>(
  rows: VersionedRows<Row>,
  c: Stamp,
  row: Row,
  changeType: ChangeType,
  extra: Partial<RecordVersion>,
): RecordVersion {
  return {
    organizationId: c.organizationId,
    entityType: rows.entityType,
    entityId: row.id,
    version: Number(row.version),
    changeType,
    snapshot: rows.snapshot(row),
    ...extra,
    actor: c.actor,
    at: c.at,
  };
}

/**
 * What a configuration import decided for one kind, inside its transaction (the import's half of the
 * lifecycle): overwrites saved at their version, then the new rows in multi-row inserts, their edges,
 * and a version each (`import`; an overwritten row made before its kind was versioned gets its version
 * 1 first). No name check (the plan made the names unique) and no audit entry per entity (the import
 * records one for the whole).
 */
export async function importVersions<Row extends VersionedRow>(
  trx: Kysely<Database>,
  rows: VersionedRows<Row>,
  deps: { versions: EntityVersionsRepository; edges: EdgeWriter },
  c: Stamp & {
    created: Row[];
    updated: { current: Row; next: Row; summary?: ChangeSummary }[];
    /** What the versions record (default `import`; a bulk copy records `clone`). */
    changeType?: ChangeType;
  },
): Promise<void> {
  const changeType = c.changeType ?? 'import';
  const versions: RecordVersion[] = [];
  for (const { current, next, summary } of c.updated) {
    if (!(await rows.update(trx, next, Number(current.version))))
      throw conflict(`the ${rows.noun} changed meanwhile; nothing was imported`);
    if (rows.edges) await deps.edges.sync(trx, rows.entityType, next.id);
    versions.push(
      versionOf(rows, c, next, changeType, {
        ...(rows.createdOf ? { previous: rows.snapshot(current) } : {}),
        ...(summary ? { summary } : {}),
      }),
    );
  }
  if (c.created.length > 0) {
    await rows.insert(trx, c.created);
    if (rows.edges)
      await deps.edges.syncMany(
        trx,
        rows.entityType,
        c.created.map((row) => row.id),
      );
  }
  for (const row of c.created) versions.push(versionOf(rows, c, row, changeType, { previous: null }));
  const createdOf = rows.createdOf;
  if (createdOf) {
    const baselines = c.updated
      .filter(({ current }) => Number(current.version) === 1)
      .map(({ current }) => {
        const made = createdOf(current);
        return {
          ...versionOf(rows, c, current, 'create', { previous: null }),
          actor: { userId: made.createdBy },
          at: made.createdAt,
        };
      });
    await deps.versions.recordMany(
      trx,
      await deps.versions.withoutFirstVersion(trx, c.organizationId, baselines),
    );
  }
  await deps.versions.recordMany(trx, versions);
}
