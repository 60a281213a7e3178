import type { Kysely } from 'kysely';
import type { Actor } from '../../platform/actor.js';
import type { Database } from '../../storage/tables.js';
import type { ChangeSummary } from './entity-versions.repository.js';
import type { VersionedChange } from './version-history.js';

/**
 * What a versioned kind tells the shared lifecycle (versioned-lifecycle.ts) and an import's batches
 * (version-batches.ts): how its rows are stored. Each kind implements it beside its module
 * (`model-versions.ts`, `connection-versions.ts` ...).
 */

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

/** Who changes an entity, in which organization, when. */
export interface Stamp {
  organizationId: string;
  actor: Actor;
  at: number;
}

/** A save of `next` over `current`: how it came about, its audit action and reason, and rules that need the transaction. */
export type Save<Row> = Stamp & {
  current: Row;
  next: Row;
  change?: VersionedChange;
  action?: string;
  reason?: string | null;
  check?: () => Promise<void>;
};
