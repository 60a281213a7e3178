import { isDeepStrictEqual } from 'node:util';
import type { Kysely } from 'kysely';
import type { Actor } from '../../platform/actor.js';
import { conflict, withDetails } from '../../platform/errors.js';
import type { Database } from '../../storage/tables.js';
import type {
  ChangeSummary,
  ChangeType,
  EntityVersion,
  EntityVersionsRepository,
} from './entity-versions.repository.js';

/** How a save came about: the change type, and for a revert the version whose content it restores. */
export interface VersionedChange {
  changeType?: ChangeType;
  revertedFrom?: number | null;
}

/** The save options a revert of `version` passes to the entity's own update. */
export const revertOf = (version: Pick<EntityVersion, 'version'>) => ({
  changeType: 'revert' as const,
  revertedFrom: version.version,
});

/**
 * The version flow one versioned entity type shares with the others (models, pipelines, connections,
 * functions): optimistic concurrency on `version`, a snapshot recorded per create, update, revert,
 * clone or import inside the save's transaction, the history read back and deleted with the entity.
 * The entity's service keeps its own rules; this holds what every one of them did the same way.
 */
export class VersionHistory {
  constructor(
    private readonly versions: EntityVersionsRepository,
    /** Stored entity type, e.g. `connection`. */
    readonly entityType: string,
    /** Noun for messages, e.g. `connection`. */
    readonly noun: string,
  ) {}

  /**
   * 409 `conflict` (with `currentVersion`) unless the caller's `basedOn` is the stored version. A revert
   * is based on the current version by definition: pass `current` as `basedOn` then.
   */
  checkBasedOn(current: number, basedOn: unknown): void {
    if (basedOn === current) return;
    throw withDetails(
      conflict(
        `the ${this.noun} is at version ${current}, not ${JSON.stringify(basedOn)}; reload it and apply your change again`,
      ),
      { currentVersion: current },
    );
  }

  /** 409 when a guarded write changed no row: another change won the race since it was read. */
  changedMeanwhile(): never {
    throw conflict(`the ${this.noun} changed meanwhile; reload it and apply your change again`);
  }

  /**
   * Whether a save would store what the current version holds: `before` and `after` (their snapshots)
   * equal as stored JSON, members in any order, array items in theirs (a reordering is a change, which
   * the diff, matching items by identity, does not show). Such a save writes nothing: no version, no audit
   * entry, no restart of what the entity drives; it answers the entity as it is.
   */
  static unchanged(before: unknown, after: unknown): boolean {
    const stored = (value: unknown): unknown => JSON.parse(JSON.stringify(value ?? null));
    return isDeepStrictEqual(stored(before), stored(after));
  }

  /** The change type a save records: `update` unless told, `revert` when it restores a version. */
  static changeTypeOf(change: VersionedChange): ChangeType {
    return change.changeType ?? 'update';
  }

  /**
   * Records one version inside `trx`. Version 1 (a create or clone) is compared with nothing; a later
   * one with `previous`, or with the version before it read from the history.
   */
  record(
    trx: Kysely<Database>,
    input: {
      organizationId: string;
      entityId: string;
      version: number;
      snapshot: unknown;
      previous?: unknown;
      change?: VersionedChange;
      summary?: ChangeSummary;
      actor: Actor;
      at: number;
    },
  ): Promise<ChangeSummary> {
    return this.versions.record(trx, {
      organizationId: input.organizationId,
      entityType: this.entityType,
      entityId: input.entityId,
      version: input.version,
      changeType: input.change?.changeType ?? (input.version === 1 ? 'create' : 'update'),
      snapshot: input.snapshot,
      ...(input.version === 1 ? { previous: null } : {}),
      ...(input.previous !== undefined ? { previous: input.previous } : {}),
      ...(input.summary ? { summary: input.summary } : {}),
      revertedFrom: input.change?.revertedFrom ?? null,
      actor: input.actor,
      at: input.at,
    });
  }

  /** One stored version of the entity, or undefined. */
  get(organizationId: string, entityId: string, version: number, db?: Kysely<Database>) {
    return this.versions.get(organizationId, this.entityType, entityId, version, db);
  }

  /**
   * Rows made before their entity type was versioned (connections and functions before migration 0020)
   * start at version 1 with no history: the first read of the history or the first change records their
   * current content as version 1 (`create`, with the row's creator and time), so that history always
   * begins with a create and every later version has one before it.
   */
  async ensureBaseline(
    db: Kysely<Database>,
    row: {
      organizationId: string;
      entityId: string;
      version: number;
      snapshot: unknown;
      createdBy: string | null;
      createdAt: number;
    },
  ): Promise<void> {
    if (row.version !== 1) return;
    if (await this.versions.get(row.organizationId, this.entityType, row.entityId, 1, db)) return;
    await this.versions.recordBaseline(db, {
      organizationId: row.organizationId,
      entityType: this.entityType,
      entityId: row.entityId,
      version: 1,
      changeType: 'create',
      snapshot: row.snapshot,
      actor: { userId: row.createdBy },
      at: row.createdAt,
    });
  }

  /** Deletes the entity's history, inside the transaction that deletes the entity. */
  deleteAll(trx: Kysely<Database>, organizationId: string, entityId: string): Promise<void> {
    return this.versions.deleteAll(trx, organizationId, this.entityType, entityId);
  }
}
