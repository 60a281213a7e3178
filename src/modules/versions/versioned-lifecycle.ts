import type { Kysely } from 'kysely';
import type { Actor } from '../../platform/actor.js';
import { conflict } from '../../platform/errors.js';
import type { Database } from '../../storage/tables.js';
import type {
  ChangeSummary,
  ChangeType,
  EntityVersionsRepository,
  RecordVersion,
} from './entity-versions.repository.js';
import { type VersionedChange, VersionHistory } from './version-history.js';

/** Rewrites the dependency-graph edges an entity's row holds (the graph's `DependencyEdges`). */
export interface EdgeWriter {
  sync(trx: Kysely<Database>, ownerType: string, id: string): Promise<void>;
  syncMany(trx: Kysely<Database>, ownerType: string, ids: readonly string[]): Promise<void>;
}

/** A change to one entity for its audit log entry: the lifecycle's action and the rows before and after. */
export interface AuditedChange<Row> {
  organizationId: string;
  actor: Actor;
  /** `created`, `cloned`, `updated`, `reverted`, `deleted`, or the caller's own (`enabled`, `moved` ...). */
  action: string;
  id: string;
  before: Row | null;
  after: Row | null;
  /** Why, as the caller gave it. */
  reason?: string | null;
  /** What the entry adds to the entity's view (a clone's source, a deleted model's bindings). */
  note?: Record<string, unknown>;
}

/** What the lifecycle reads of every versioned row. */
export interface VersionedRow {
  id: string;
  version: number;
}

/** How one versioned kind stores its rows: the hooks the shared lifecycle (and an import) calls. */
export interface VersionedRows<Row extends VersionedRow, Snapshot = unknown> {
  /** The stored entity type of its versions (`model`), and the owner type of its edges. */
  entityType: string;
  /** The noun of messages (`model`). */
  noun: string;
  /** Whether its rows hold references: their edges in the dependency graph follow every write. */
  edges: boolean;
  /** What a version holds and a revert restores; never a secret value. */
  snapshot(row: Row): Snapshot;
  /** What the unchanged-save rule compares (default: the snapshot; a connection adds its secrets). */
  compared?(row: Row): unknown;
  /** The summary a save's version records (default: the changed pointers between the snapshots). */
  summary?(before: Row | undefined, after: Row): ChangeSummary | undefined;
  /**
   * For kinds versioned after their rows existed (connections, functions): who made a row and when.
   * Their version 1 is recorded on first need (`ensureBaseline`), and each change is compared with the
   * row it replaces.
   */
  createdOf?(row: Row): { createdBy: string | null; createdAt: number };
  /** The message of the 409 when another entity (not `except`) has the row's name; undefined: free. */
  nameTaken?(trx: Kysely<Database>, row: Row, except?: Row): Promise<string | undefined>;
  insert(trx: Kysely<Database>, rows: Row[]): Promise<void>;
  /** Saves `next` only while the stored version is `basedOn`; answers whether it did. */
  update(trx: Kysely<Database>, next: Row, basedOn: number): Promise<boolean>;
  delete(trx: Kysely<Database>, row: Row): Promise<void>;
}

/** The rows of a kind with its audit log entries: what the lifecycle of single changes needs. */
export interface AuditedRows<Row extends VersionedRow, Snapshot = unknown>
  extends VersionedRows<Row, Snapshot> {
  /** Records the change in the audit log (the kind's own view of the rows, secrets reduced). */
  audit(trx: Kysely<Database>, at: number, change: AuditedChange<Row>): Promise<unknown>;
}

interface Stamp {
  organizationId: string;
  actor: Actor;
  at: number;
}

/** A save of `next` over `current`: how it came about, its audit action and reason, and rules that need the transaction. */
type Save<Row> = Stamp & {
  current: Row;
  next: Row;
  change?: VersionedChange;
  action?: string;
  reason?: string | null;
  check?: () => Promise<void>;
};

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

/** The version a row records. */
function versionOf<Row extends VersionedRow>(
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
