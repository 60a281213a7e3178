import type { Kysely } from 'kysely';
import type { Actor } from '../../platform/actor.js';
import type { ListParams, Pagination } from '../../platform/list-query.js';
import type { Database, EntityVersionTable } from '../../storage/tables.js';
import { diffJson, type JsonChange } from './json-diff.js';

export type ChangeType = EntityVersionTable['change_type'];

/** What a version changed against the one before it: JSON pointers, shallowest first. */
export interface ChangeSummary {
  added: string[];
  removed: string[];
  changed: string[];
}

export interface EntityVersion {
  version: number;
  changeType: ChangeType;
  snapshot: unknown;
  summary: ChangeSummary;
  revertedFrom: number | null;
  createdAt: number;
  createdBy: string | null;
  createdByClient: string | null;
}

export interface RecordVersion {
  organizationId: string;
  entityType: string;
  entityId: string;
  /** The entity's version after this change (1 for a create). */
  version: number;
  changeType: ChangeType;
  /** The entity as the API shows it; never a secret value. */
  snapshot: unknown;
  /** The previous version's snapshot; read from the history when omitted. */
  previous?: unknown;
  revertedFrom?: number | null;
  /** A summary of the entity's own making; the default lists the changed pointers two levels deep. */
  summary?: ChangeSummary;
  actor: Actor;
  at: number;
}

/** The default summary: each change's pointer cut to two levels, listed once per kind. */
export function summarizeChanges(changes: JsonChange[], depth = 2): ChangeSummary {
  const summary: ChangeSummary = { added: [], removed: [], changed: [] };
  const seen = new Set<string>();
  for (const change of changes) {
    const parts = change.path.split('/').slice(1);
    const cut = parts.length > depth;
    const path = `/${parts.slice(0, depth).join('/')}`;
    const kind = cut ? 'changed' : change.kind;
    if (seen.has(`${kind} ${path}`)) continue;
    seen.add(`${kind} ${path}`);
    summary[kind].push(path);
  }
  return summary;
}

const toVersion = (
  row: Omit<EntityVersionTable, 'organization_id' | 'entity_type' | 'entity_id'>,
): EntityVersion => ({
  version: row.version,
  changeType: row.change_type,
  snapshot: JSON.parse(row.snapshot),
  summary: JSON.parse(row.summary),
  revertedFrom: row.reverted_from,
  createdAt: Number(row.created_at),
  createdBy: row.created_by,
  createdByClient: row.created_by_client,
});

/**
 * The one version history of every versioned entity. Callers record a version inside the transaction
 * that saves the entity, so that an entity and its history never disagree.
 */
export class EntityVersionsRepository {
  constructor(private readonly db: Kysely<Database>) {}

  /** Appends a version inside `trx`; answers the summary it stored. */
  async record(trx: Kysely<Database>, input: RecordVersion): Promise<ChangeSummary> {
    return (await this.recordMany(trx, [input]))[0]!;
  }

  /** `record` for many changes at once: multi-row inserts of 100 rows; answers the summaries in order. */
  async recordMany(trx: Kysely<Database>, inputs: RecordVersion[]): Promise<ChangeSummary[]> {
    const summaries: ChangeSummary[] = [];
    const rows: EntityVersionTable[] = [];
    for (const input of inputs) {
      let previous = input.previous;
      if (previous === undefined && input.version > 1) {
        previous = (
          await this.get(input.organizationId, input.entityType, input.entityId, input.version - 1, trx)
        )?.snapshot;
      }
      const summary =
        input.summary ?? summarizeChanges(previous === undefined ? [] : diffJson(previous, input.snapshot));
      summaries.push(summary);
      rows.push({
        organization_id: input.organizationId,
        entity_type: input.entityType,
        entity_id: input.entityId,
        version: input.version,
        change_type: input.changeType,
        snapshot: JSON.stringify(input.snapshot),
        summary: JSON.stringify(summary),
        reverted_from: input.revertedFrom ?? null,
        created_at: input.at,
        created_by: input.actor.userId,
        created_by_client: input.actor.clientId ?? null,
      });
    }
    for (let i = 0; i < rows.length; i += 100)
      await trx
        .insertInto('entity_versions')
        .values(rows.slice(i, i + 100))
        .execute();
    return summaries;
  }

  /** One version, or undefined when the entity (in this organization) has no such version. */
  async get(
    organizationId: string,
    entityType: string,
    entityId: string,
    version: number,
    db: Kysely<Database> = this.db,
  ): Promise<EntityVersion | undefined> {
    const row = await db
      .selectFrom('entity_versions')
      .select([
        'version',
        'change_type',
        'snapshot',
        'summary',
        'reverted_from',
        'created_at',
        'created_by',
        'created_by_client',
      ])
      .where('organization_id', '=', organizationId)
      .where('entity_type', '=', entityType)
      .where('entity_id', '=', entityId)
      .where('version', '=', version)
      .executeTakeFirst();
    return row && toVersion(row);
  }

  /** Versions newest first, without their snapshots (a page of a long history stays small). */
  async list(
    organizationId: string,
    entityType: string,
    entityId: string,
    params: Pick<ListParams, 'limit' | 'offset'>,
    db: Kysely<Database> = this.db,
  ): Promise<{ rows: Omit<EntityVersion, 'snapshot'>[]; pagination: Pagination }> {
    const limit = params.limit ?? 50;
    const offset = params.offset ?? 0;
    const scope = db
      .selectFrom('entity_versions')
      .where('organization_id', '=', organizationId)
      .where('entity_type', '=', entityType)
      .where('entity_id', '=', entityId);
    const [rows, counted] = await Promise.all([
      scope
        .select([
          'version',
          'change_type',
          'summary',
          'reverted_from',
          'created_at',
          'created_by',
          'created_by_client',
        ])
        .orderBy('version', 'desc')
        .limit(limit)
        .offset(offset)
        .execute(),
      scope.select((eb) => eb.fn.countAll<number | string>().as('total')).executeTakeFirst(),
    ]);
    return {
      rows: rows.map((row) => {
        const { snapshot: _, ...rest } = toVersion({ ...row, snapshot: 'null' });
        return rest;
      }),
      pagination: { total: Number(counted?.total ?? 0), limit, offset },
    };
  }

  /**
   * The first versions in `baselines` whose entity has no version 1 yet (rows made before their type
   * was versioned): one query per 500 entities, so an import can record them in a batch.
   */
  async withoutFirstVersion(
    db: Kysely<Database>,
    organizationId: string,
    baselines: RecordVersion[],
  ): Promise<RecordVersion[]> {
    const have = new Set<string>();
    for (let i = 0; i < baselines.length; i += 500) {
      const ids = baselines.slice(i, i + 500).map((b) => b.entityId);
      const rows = await db
        .selectFrom('entity_versions')
        .select(['entity_type', 'entity_id'])
        .where('organization_id', '=', organizationId)
        .where('version', '=', 1)
        .where('entity_id', 'in', ids)
        .execute();
      for (const row of rows) have.add(`${row.entity_type} ${row.entity_id}`);
    }
    return baselines.filter((b) => !have.has(`${b.entityType} ${b.entityId}`));
  }

  /**
   * Records `input` unless the entity already has that version (a concurrent writer recorded it):
   * the first version of a row made before its entity type was versioned, recorded when first needed.
   */
  async recordBaseline(trx: Kysely<Database>, input: RecordVersion): Promise<void> {
    await trx
      .insertInto('entity_versions')
      .values({
        organization_id: input.organizationId,
        entity_type: input.entityType,
        entity_id: input.entityId,
        version: input.version,
        change_type: input.changeType,
        snapshot: JSON.stringify(input.snapshot),
        summary: JSON.stringify(input.summary ?? summarizeChanges([])),
        reverted_from: null,
        created_at: input.at,
        created_by: input.actor.userId,
        created_by_client: input.actor.clientId ?? null,
      })
      .onConflict((oc) => oc.columns(['entity_type', 'entity_id', 'version']).doNothing())
      .execute();
  }

  /** Removes an entity's whole history (with the entity, in its transaction). */
  async deleteAll(
    trx: Kysely<Database>,
    organizationId: string,
    entityType: string,
    entityId: string,
  ): Promise<void> {
    await trx
      .deleteFrom('entity_versions')
      .where('organization_id', '=', organizationId)
      .where('entity_type', '=', entityType)
      .where('entity_id', '=', entityId)
      .execute();
  }
}
