import type { Kysely } from 'kysely';
import { conflict } from '../../platform/errors.js';
import { classifyDriverError } from '../../storage/driver-errors.js';
import type { Database } from '../../storage/tables.js';
import type { ChangeType, EntityVersionsRepository } from './entity-versions.repository.js';
import { importVersions } from './version-batches.js';
import { VersionHistory } from './version-history.js';
import type { AuditedRows, EdgeWriter, Save, Stamp, VersionedRow } from './versioned-rows.js';

export { importVersions } from './version-batches.js';
export type { AuditedChange, AuditedRows, EdgeWriter, VersionedRows } from './versioned-rows.js';

/**
 * The versioned lifecycle every configuration entity kind shares (models, pipelines, dashboards,
 * connections, functions), written once: a create or clone, an update or revert, a delete, and an
 * import's batch, each inside the caller's transaction with its version snapshot, its audit entry, its
 * dependency-graph edges, the name check, and the unchanged-save rule (a save that changes nothing
 * writes nothing). The kind's service keeps its own rules (what a valid body is, what else a save
 * does) and calls these steps; `VersionedRows` is how the kind stores its rows.
 */
export class VersionedLifecycle<Row extends VersionedRow, Snapshot = unknown> {
  /** The version flow: optimistic concurrency, the history read back (version-history.ts). */
  readonly history: VersionHistory;

  constructor(
    private readonly rows: AuditedRows<Row, Snapshot>,
    private readonly deps: { versions: EntityVersionsRepository; edges: EdgeWriter },
  ) {
    this.history = new VersionHistory(deps.versions, rows.entityType, rows.noun);
  }

  /**
   * Whether saving `next` over `current` would store what the current version holds (see
   * `VersionHistory.unchanged`): such a save writes nothing, no version, no audit entry, no restart of
   * what the entity drives, and answers the entity as it is.
   */
  unchanged(current: Row, next: Row): boolean {
    const compared = this.rows.compared ?? this.rows.snapshot;
    return VersionHistory.unchanged(compared(current), compared(next));
  }

  /** 409 when another entity has the row's name (the kind decides what a clash is: case, scope). */
  private async checkName(trx: Kysely<Database>, row: Row, except?: Row): Promise<void> {
    const taken = await this.rows.nameTaken?.(trx, row, except);
    if (taken !== undefined) throw conflict(taken);
  }

  /**
   * Runs `write`, the transaction that stores `row` (over `except`). When a concurrent save of the same
   * name won the race (both passed the name check; the unique index refused the later one), answers
   * the 409 naming the row that holds the name, as the check would have, not a bare unique violation.
   */
  async guardName<T>(
    db: Kysely<Database>,
    row: Row,
    except: Row | undefined,
    write: () => Promise<T>,
  ): Promise<T> {
    try {
      return await write();
    } catch (error) {
      if (classifyDriverError(error) === 'unique_violation') await this.checkName(db, row, except);
      throw error;
    }
  }

  private async syncEdges(trx: Kysely<Database>, id: string): Promise<void> {
    if (this.rows.edges) await this.deps.edges.sync(trx, this.rows.entityType, id);
  }

  /** Records version 1 of a row made before its kind was versioned, when it has none (see VersionHistory). */
  ensureBaseline(db: Kysely<Database>, organizationId: string, row: Row): Promise<void> {
    const made = this.rows.createdOf?.(row);
    if (!made) return Promise.resolve();
    return this.history.ensureBaseline(db, {
      organizationId,
      entityId: row.id,
      version: Number(row.version),
      snapshot: this.rows.snapshot(row),
      ...made,
    });
  }

  /**
   * A new entity inside `trx`: its name checked, then `check` (rules that need the transaction), its
   * row, its edges, version 1 (`create`, or `clone`) and the audit entry (`created` or `cloned`).
   */
  async create(
    trx: Kysely<Database>,
    c: Stamp & {
      row: Row;
      changeType?: ChangeType;
      check?: () => Promise<void>;
      note?: Record<string, unknown>;
    },
  ): Promise<void> {
    const { row, organizationId, actor, at } = c;
    const id = row.id;
    const changeType = c.changeType ?? 'create';
    await this.checkName(trx, row);
    await c.check?.();
    await this.rows.insert(trx, [row]);
    await this.syncEdges(trx, id);
    const summary = this.rows.summary?.(undefined, row);
    await this.history.record(trx, {
      organizationId,
      entityId: id,
      version: 1,
      change: { changeType },
      snapshot: this.rows.snapshot(row),
      ...(summary ? { summary } : {}),
      actor,
      at,
    });
    await this.rows.audit(trx, at, {
      organizationId,
      actor,
      action: changeType === 'clone' ? 'cloned' : 'created',
      id,
      before: null,
      after: row,
      ...(c.note ? { note: c.note } : {}),
    });
  }

  /**
   * A save of `next` over `current` inside `trx`, unless it changes nothing (then it writes nothing
   * and answers false): the name checked, then `check`, the row saved at `current`'s version (409 when
   * another change won the race), its edges, the version (`update`, or `revert` naming the version it
   * restores) and the audit entry (`updated`, `reverted`, or `action`).
   */
  async update(trx: Kysely<Database>, c: Save<Row>): Promise<boolean> {
    if (this.unchanged(c.current, c.next)) return false;
    await this.save(trx, c);
    return true;
  }

  /** `update` for a caller that applied the unchanged-save rule itself (before opening the transaction). */
  async save(trx: Kysely<Database>, c: Save<Row>): Promise<void> {
    const { current, next, organizationId, actor, at } = c;
    const id = current.id;
    await this.checkName(trx, next, current);
    await c.check?.();
    await this.ensureBaseline(trx, organizationId, current);
    if (!(await this.rows.update(trx, next, Number(current.version)))) this.history.changedMeanwhile();
    await this.syncEdges(trx, id);
    const summary = this.rows.summary?.(current, next);
    await this.history.record(trx, {
      organizationId,
      entityId: id,
      version: Number(next.version),
      snapshot: this.rows.snapshot(next),
      // A kind versioned late compares with the row it replaces (its history may begin at this row).
      ...(this.rows.createdOf ? { previous: this.rows.snapshot(current) } : {}),
      ...(c.change ? { change: c.change } : {}),
      ...(summary ? { summary } : {}),
      actor,
      at,
    });
    const action = c.action ?? (c.change?.changeType === 'revert' ? 'reverted' : 'updated');
    await this.rows.audit(trx, at, {
      organizationId,
      actor,
      action,
      id,
      before: current,
      after: next,
      ...(c.reason !== undefined ? { reason: c.reason } : {}),
    });
  }

  /** Deletes an entity inside `trx` with its version history and edges, and records the audit entry. */
  async delete(
    trx: Kysely<Database>,
    c: Stamp & { row: Row; note?: Record<string, unknown> },
  ): Promise<void> {
    const id = c.row.id;
    await this.history.deleteAll(trx, c.organizationId, id);
    await this.rows.delete(trx, c.row);
    await this.syncEdges(trx, id);
    await this.rows.audit(trx, c.at, {
      organizationId: c.organizationId,
      actor: c.actor,
      action: 'deleted',
      id,
      before: c.row,
      after: null,
      ...(c.note ? { note: c.note } : {}),
    });
  }

  /**
   * Many new entities at once (a bulk import, the functions of a cloned connection) inside `trx`: their
   * rows, edges and versions 1 (`changeType`); no audit entry (the caller records one for the whole).
   */
  async createMany(trx: Kysely<Database>, c: Stamp & { rows: Row[]; changeType: ChangeType }): Promise<void> {
    await importVersions(trx, this.rows, this.deps, { ...c, created: c.rows, updated: [] });
  }
}
