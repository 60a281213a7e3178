import type { Kysely } from 'kysely';
import type { Database } from '../../../storage/tables.js';
import type { DependencyGraph } from '../edges/dependency-graph.js';
import type { Reference } from '../edges/references.js';
import type { ImpactAction } from '../impact/impact.js';
import type { UpdateRules } from '../impact/update-rules.js';
import type { ExchangeAdapter } from './kind-exchange.js';

/**
 * The contract every configuration entity kind fulfils so that the graph, export and import can handle
 * it without knowing its module: each module implements its kinds in its own folder (a pipeline's
 * references beside the pipelines, a dashboard's beside the dashboards) and the composition root
 * registers them (src/app.ts). The graph loops over the registered kinds; it imports none of them.
 * How to add one: README.md of this module.
 */

/** What the graph shows of an entity of the organization. */
export interface EntityFacts {
  type: string;
  id: string;
  name: string;
  /** `running` / `stopped` (connections: desired state), `enabled` / `disabled` (pipelines), else null. */
  status: string | null;
  /** False for a disabled pipeline. */
  active: boolean;
  /** A function's connection (its pages live under it). */
  connectionId?: string;
}

/** The references one owner's stored row holds, as extracted on every save. */
export interface Extracted {
  organizationId: string;
  /** The graph node the references go from (a model binding's go from its model). */
  from: { type: string; id: string };
  references: Reference[];
  /** False for a disabled pipeline: only an active owner must refer to entities that exist. */
  active: boolean;
}

/**
 * What writes edges: an entity kind, or a part of one whose edges go from it (a model binding, from its
 * model). The stored edges are rewritten from the owner's row on every save (graph/edges/edges.repository.ts).
 */
export interface EdgeOwner {
  /** Stored as the edges' `owner_type`. */
  readonly ownerType: string;
  /** The table of the owners' rows (a rebuild reads every id). */
  readonly table: EntityTable | 'model_bindings';
  /** Reads the owners' stored rows (one query) and extracts their references, by id; a row that is gone is absent. */
  extract(trx: Kysely<Database>, ids: string[]): Promise<Map<string, Extracted>>;
  /** Owner types whose rows belong to this owner's row and go with it (a connection's functions). */
  readonly parts?: readonly string[];
  /**
   * For an active owner: the message that refuses a new reference to an entity the organization does
   * not have (400). Absent: such a reference is kept, and the graph shows its target missing.
   */
  refuseMissing?(reference: Reference): string;
}

/** Tables whose rows are entities of one organization (`id`, `organization_id`). */
export type EntityTable =
  | 'connections'
  | 'connection_functions'
  | 'models'
  | 'pipelines'
  | 'dashboards'
  | 'dashboard_folders';

/** What the orphans view asks of a kind: its entities nothing uses, each with the reason. */
export interface UnusedQuery {
  db: Kysely<Database>;
  organizationId: string;
  graph: DependencyGraph;
  /** The organization's entities of this kind (from `facts`). */
  entities: EntityFacts[];
  /** Topics: a topic that received a value since this time (µs) is in use. */
  quietSinceUs: number;
  quietDays: number;
}

/** One configuration entity kind. */
export interface EntityKind {
  /** The type name: in graph keys (`pipeline:<id>`), selections, bundle keys, versions and the audit log. */
  readonly type: string;
  /** The scopes `<family>:read` and `<family>:write` govern it (reading it in the graph, exporting, importing). */
  readonly scopeFamily: string;
  /** The table of its rows (locks against concurrent deletes and saves); topics have none. */
  readonly table?: EntityTable;
  /** The facts of the organization's entities of this kind: those of `ids`, or all with null. */
  facts?(db: Kysely<Database>, organizationId: string, ids: readonly string[] | null): Promise<EntityFacts[]>;
  /** What writes its edges: the kind itself, and parts of it (model bindings). */
  readonly edges?: readonly EdgeOwner[];
  /** The actions whose impact can be assessed (`delete`, `stop`, `disable`, `update`). */
  readonly actions?: readonly ImpactAction[];
  /** How a proposed update is read and judged against each dependent (graph/impact/update-rules.ts). */
  readonly update?: UpdateRules;
  /** Its entities nothing uses (the orphans view); absent: never listed. */
  unused?(query: UnusedQuery): Promise<{ id: string; reason: string }[]>;
  /** Its section of a configuration bundle (export and import). */
  readonly exchange?: ExchangeAdapter;
  /** The kind whose bundle section carries it (a function travels inside its connection). */
  readonly partOf?: string;
}

/** The registered entity kinds, in the order an import writes them (each after what it refers to). */
export class EntityKinds {
  private readonly byType = new Map<string, EntityKind>();
  private readonly owners = new Map<string, EdgeOwner>();

  constructor(kinds: readonly EntityKind[]) {
    for (const kind of kinds) {
      if (this.byType.has(kind.type)) throw new Error(`entity kind ${kind.type} is registered twice`);
      this.byType.set(kind.type, kind);
      for (const owner of kind.edges ?? []) this.owners.set(owner.ownerType, owner);
    }
  }

  /** Every kind, in registration order. */
  all(): EntityKind[] {
    return [...this.byType.values()];
  }

  /** The kind of `type`; throws for a type nobody registered (a programming error, not bad input). */
  of(type: string): EntityKind {
    const kind = this.byType.get(type);
    if (!kind) throw new Error(`no entity kind ${type} is registered`);
    return kind;
  }

  has(type: string): boolean {
    return this.byType.has(type);
  }

  /** The edge owner stored as `ownerType`. */
  owner(ownerType: string): EdgeOwner {
    const owner = this.owners.get(ownerType);
    if (!owner) throw new Error(`no edge owner ${ownerType} is registered`);
    return owner;
  }

  /** Every edge owner. */
  allOwners(): EdgeOwner[] {
    return [...this.owners.values()];
  }

  /** The scope that reads entities of `type` (`connectors:read`). */
  readScope(type: string): string {
    return `${this.of(type).scopeFamily}:read`;
  }
}
