import type { Kysely } from 'kysely';
import type { Actor } from '../../../platform/actor.js';
import type { Database } from '../../../storage/tables.js';
import type { EntityVersionsRepository } from '../../versions/entity-versions.repository.js';
import type { DependencyEdges } from '../edges/edges.repository.js';
import type { Reference } from '../edges/references.js';

/**
 * The bundle half of the entity-kind contract: how a kind's entities are read for export, written into
 * a bundle, planned and written back by an import (src/modules/bundles/ drives it, one section after
 * the other, in the order the kinds are registered). Each kind owns its section's JSON shape.
 */

/** A reference inside a bundle: the key of another entity of the bundle (or of the target, when bound). */
export interface BundleRef {
  $ref: string | null;
}

/** A reference inside a bundle (`{ $ref }`), as opposed to a plain parameter value. */
export const isBundleRef = (value: unknown): value is BundleRef =>
  typeof value === 'object' && value !== null && '$ref' in value;

/** Sets the member at a JSON pointer (`/0/fields/2/model`) of a parsed JSON value. */
export function setAtPointer(target: unknown, pointer: string, value: unknown): void {
  const parts = pointer.split('/').slice(1);
  let at = target as Record<string, unknown>;
  for (const part of parts.slice(0, -1)) at = at[part] as Record<string, unknown>;
  at[parts[parts.length - 1]!] = value;
}

/**
 * The entity references of a stored row (its kind's references), without topics and dynamic ones: the
 * JSON pointer inside the entity, the target's type and id. What a bundle turns into `{ $ref }`.
 */
export function entityReferences(references: Reference[]) {
  return references
    .filter((r) => !r.dynamic && r.targetType !== 'topic' && r.targetId !== null)
    .map((r) => ({ path: r.path, type: r.targetType as string, id: r.targetId! }));
}

/** A secret left out of the bundle: filled at import. */
export interface BundleInput {
  /** `secret:<entity key>:<path>`, e.g. `secret:connection:PLC 1:config.password`. */
  key: string;
  kind: 'secret';
  entity: string;
  path: string;
  description: string;
}

/** A problem that stops an import, with the entity it concerns (when one). */
export interface PlanProblem {
  key: string | null;
  code: string;
  message: string;
}

export type ConflictPolicy = 'skip' | 'overwrite' | 'rename' | 'fail';

/** How an import treats what already exists. */
export interface ImportOptions {
  /** Match an entity to an existing one by name (default) or by its source id. */
  match?: 'name' | 'id';
  /** What to do with an entity that matches an existing one (default `fail`). */
  conflict?: ConflictPolicy;
  /** Per-entity policies by bundle key, over `conflict`. */
  overrides?: Record<string, ConflictPolicy>;
  /** A bundle connection key → an existing connection id to use instead of importing that connection. */
  bindings?: Record<string, string>;
  /** Pipelines keep their enabled flag and connections start (autoStart) when true; default false. */
  activate?: boolean;
}

export type PlanActionKind = 'create' | 'update' | 'skip' | 'rename' | 'bind';

/** What an import does with one entity of the bundle. */
export interface PlanAction {
  key: string;
  type: string;
  name: string;
  action: PlanActionKind;
  /** The entity's id in this organization: the existing one, or the one a create will use. */
  targetId: string;
  /** The name a rename gives it. */
  newName: string | null;
}

/** An entity of the organization as export sees it, read from the kind's rows. */
export interface CatalogEntity {
  /** `<type>:<id>` (`settings:organization` for the one settings document). */
  ref: string;
  name: string;
  /** Its bundle key (`connection:PLC 1`, `function:PLC 1/read`, `dashboard:Plant/Lines/Overview`), unique per type. */
  key: string;
  /** The entities it refers to (`<type>:<id>`): an export always brings them along. */
  requires: string[];
  /** For a part (a function): the entity it travels inside (its connection), which a selection of it picks. */
  carrier?: string;
}

/** Every kind's rows of one organization, by kind type: what export reads and import matches. */
export type Catalog = ReadonlyMap<string, unknown>;

/** What a kind's export is given. */
export interface ExportContext {
  /** Whether the entity is exported (selected or required). */
  inBundle(type: string, id: string): boolean;
  /** The bundle reference to an entity of the catalog; `{ $ref: null }` for one that no longer exists. */
  ref(type: string, id: string | null): BundleRef;
  /** The bundle key of an entity of the catalog. */
  keyOf(type: string, id: string): string;
  /** Opens secrets sealed at rest (only to tell which are set: their values never leave the server). */
  keyEncryptionKey: Buffer;
}

/** A kind's part of the bundle: its entities, the inputs they need, what the target must support. */
export interface ExportedSection<Item = unknown> {
  items: Item[];
  inputs?: BundleInput[];
  /** Members of `bundle.requires` this kind fills (`protocols`, `nodeTypes`). */
  requires?: Record<string, string[]>;
}

/** What a kind's plan is given: the decisions made so far and the helpers that make one. */
export interface PlanContext {
  options: ImportOptions;
  /** The secrets the bundle asks for. */
  inputs: readonly BundleInput[];
  /** Every key the bundle holds. */
  bundleKeys: ReadonlySet<string>;
  /** The target id of each key planned so far. */
  targetOf: ReadonlyMap<string, string>;
  /** The policy for an entity that matches an existing one. */
  policyOf(key: string): ConflictPolicy;
  /** An existing row the bundle entity matches: by source id or by `sameName`, as `options.match` says. */
  find<T extends { id: string }>(rows: T[], sourceId: string, sameName: (row: T) => boolean): T | undefined;
  /** Decides create, update, skip or rename for one entity given its match (a name is unique in `taken`). */
  decide(
    type: string,
    key: string,
    name: string,
    existing: { id: string } | undefined,
    taken: Set<string>,
    maxName: number,
  ): PlanAction;
  /** Records an action the kind decided itself (a bound connection, a function that follows it). */
  add(action: PlanAction): void;
  problem(key: string | null, code: string, message: string): void;
  /** A problem when `value` is a `{ $ref }` to a key the bundle does not hold (`what` names the member). */
  unresolved(from: string, value: unknown, what: string): void;
  /** An input that must be given at execute. */
  requireInput(key: string): void;
}

/** What a kind's write is given, inside the import's one transaction. */
export interface WriteContext {
  trx: Kysely<Database>;
  organizationId: string;
  actor: Actor;
  now: number;
  keyEncryptionKey: Buffer;
  topicPrefix: string;
  versions: EntityVersionsRepository;
  edges: DependencyEdges;
  options: ImportOptions;
  /** The secret inputs given at execute, by input key. */
  inputs: Readonly<Record<string, string>>;
  bundleInputs: readonly BundleInput[];
  /** The plan's action for a key. */
  action(key: string): PlanAction | undefined;
  /** Whether the action writes (not a skip or a bind). */
  writes(action: PlanAction | undefined): action is PlanAction;
  /** The name the entity gets (a rename's new one). */
  nameOf(action: PlanAction): string;
  /** The target id a bundle reference resolves to; null when it names nothing. */
  idOf(ref: BundleRef | null | undefined): string | null;
  /** A write that failed on one entity: 400 naming it, and the whole import rolls back. */
  entityError(key: string, error: unknown): never;
}

/**
 * A kind's section of a configuration bundle: `Rows` what it reads of an organization, `Item` one entity
 * of its section as the bundle holds it.
 */
export interface ExchangeAdapter<Rows = unknown, Item = unknown> {
  /** The member of `bundle.entities` that holds it (`connections`). */
  readonly section: string;
  /** A kind of one entity per organization (the settings): its id, and why an analysis always offers it. */
  readonly singleton?: { id: string; offered: string };
  /** The organization's rows of this kind (inside `db`, which may be the import's transaction). */
  read(db: Kysely<Database>, organizationId: string): Promise<Rows>;
  /** Its entities as export sees them (`catalog` holds the other kinds' rows, for keys built from them). */
  entities(rows: Rows, catalog: Catalog): CatalogEntity[];
  /** Its section of a bundle: the exported entities, references as bundle keys, secrets as inputs. */
  export(rows: Rows, context: ExportContext): ExportedSection<Item>;
  /** The keys a section item holds: its own and its parts' (a connection's functions). */
  keysOf?(item: Item): string[];
  /** How many entities a section item counts for (a connection with its functions); default 1. */
  count?(item: Item): number;
  /** Plans the section's entities against the organization's rows. */
  plan(items: Item[], rows: Rows, context: PlanContext): void;
  /** After every section is planned: references the section holds to keys the bundle does not. */
  check?(items: Item[], context: PlanContext): void;
  /** Writes what the plan decided; answers the entities to start once the import is committed. */
  write(items: Item[], rows: Rows, context: WriteContext): Promise<{ start?: string[] } | undefined>;
}

/**
 * Plans a section whose names are unique in the organization regardless of case (`name_key`): each
 * entity matched by source id or by name, a rename made unique among the organization's names.
 */
export function planNamed(
  type: string,
  items: readonly { key: string; name: string; sourceId: string }[],
  rows: { id: string; name_key: string }[],
  { find, decide }: PlanContext,
): void {
  const names = new Set(rows.map((r) => r.name_key));
  for (const item of items) {
    const existing = find(rows, item.sourceId, (r) => r.name_key === item.name.toLowerCase());
    decide(type, item.key, item.name, existing, names, 100);
  }
}

/**
 * The rows a section's write stores, for the plan's creates and overwrites (skips and binds write
 * nothing): `rowOf` builds each from its item and action, answering the row it replaces (`current`,
 * for an overwrite) and the row to store (`next`).
 */
export async function plannedRows<Item extends { key: string }, Row>(
  items: readonly Item[],
  context: WriteContext,
  rowOf: (item: Item, action: PlanAction) => Promise<{ current: Row | undefined; next: Row }>,
): Promise<{ created: Row[]; updated: { current: Row; next: Row }[] }> {
  const created: Row[] = [];
  const updated: { current: Row; next: Row }[] = [];
  for (const item of items) {
    const action = context.action(item.key);
    if (!context.writes(action)) continue;
    const { current, next } = await rowOf(item, action);
    if (current) updated.push({ current, next });
    else created.push(next);
  }
  return { created, updated };
}
