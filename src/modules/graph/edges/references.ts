/**
 * What an outgoing reference of a configuration entity is. Each kind reads its own from its row as
 * stored, with pure functions beside its module (`pipeline-references.ts` beside the pipelines,
 * `dashboard-references.ts` beside the dashboards ...): the graph writes them as edges on every save,
 * export reads them to know what a selection requires.
 *
 * A reference given as an expression (a pipeline's `{{ expr }}`, a dashboard topic holding variables)
 * is `dynamic`: a pipeline's has no target and is recorded as unresolved, never guessed; a dashboard's
 * carries the filter every value could reach.
 */

/**
 * What a graph node can be (the API's enum). Each is an entity kind registered with the graph
 * (kinds/entity-kinds.ts); topics are nodes too: an exact topic path or a filter with `+` / `#`.
 */
export const ENTITY_TYPES = [
  'connection',
  'function',
  'model',
  'pipeline',
  'dashboard',
  'folder',
  'topic',
] as const;

export type EntityType = (typeof ENTITY_TYPES)[number];

export type ReferenceKind =
  /** pipeline → connection (connection.call, trigger.connection) */
  | 'uses-connection'
  /** pipeline → function (connection.call) */
  | 'uses-function'
  /** function → its connection (the function is part of it: deleted with it) */
  | 'belongs-to'
  /** pipeline → function (trigger.connection: runs on the function's values), pipeline → pipeline (trigger.pipeline) */
  | 'triggered-by'
  /** pipeline (uns.publish) or function (uns target) → topic or filter */
  | 'publishes'
  /** pipeline (trigger.uns) → filter */
  | 'subscribes'
  /** pipeline (uns.fetch latest), dashboard (panel query, segment variable) → topic or filter */
  | 'reads-topic'
  /** pipeline (uns.fetch history) → topic or filter */
  | 'reads-history'
  /** pipeline (model.validate, model.map) → model, model → model (a `model` field) */
  | 'uses-model'
  /** pipeline (pipeline.run) → pipeline */
  | 'runs-pipeline'
  /** model (a UNS binding of one of its leaf fields) → topic */
  | 'binds-topic'
  /** dashboard → folder */
  | 'in-folder';

export const REFERENCE_KINDS: readonly ReferenceKind[] = [
  'uses-connection',
  'uses-function',
  'belongs-to',
  'triggered-by',
  'publishes',
  'subscribes',
  'reads-topic',
  'reads-history',
  'uses-model',
  'runs-pipeline',
  'binds-topic',
  'in-folder',
];

/**
 * Kinds where the target depends on the source rather than the other way round: a topic depends on
 * what publishes to it, a bound topic on the model that validates it.
 */
export const REVERSED_KINDS: ReadonlySet<ReferenceKind> = new Set(['publishes', 'binds-topic']);

export interface Reference {
  kind: ReferenceKind;
  targetType: EntityType;
  /** The target entity's id; for a topic the path or filter (same as `topic`); null when dynamic. */
  targetId: string | null;
  /** For topic targets: the topic path or filter (`+`, `#`); for dynamic dashboard queries the reachable filter. */
  topic?: string;
  /** True when the target is a filter (holds `+` or `#`). */
  filter?: boolean;
  /** What holds the reference, for people: a node name, a panel id or title, a field path. */
  via: string;
  /** JSON pointer of the referencing member inside the entity (`/nodes/2/parameters/connectionId`). */
  path: string;
  /** The reference is an expression or holds variables: its target is not known until it runs. */
  dynamic: boolean;
  /** The raw text of a dynamic reference. */
  expression?: string;
  /** The referencing part is switched off (a disabled pipeline node). */
  disabled?: boolean;
  /** A pinned version (model references). */
  version?: number;
}

/** A JSON column as stored (text) or already parsed. */
export type Json<T> = string | T;

/** A JSON column parsed; `fallback` when it is empty or not JSON (a malformed row gives no references). */
export const parseJson = <T>(value: Json<T> | null | undefined, fallback: T): T => {
  if (value === null || value === undefined) return fallback;
  if (typeof value !== 'string') return value;
  try {
    return JSON.parse(value) as T;
  } catch {
    return fallback;
  }
};

/** A plain object (not null, not an array). */
export const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** True when a topic text holds a `+` or `#` wildcard segment. */
export const isTopicFilter = (topic: string): boolean =>
  topic.split('/').some((segment) => segment === '+' || segment === '#');

/** A reference to a topic path or filter (a filter when it holds `+` or `#`). */
export function topicReference(
  kind: ReferenceKind,
  topic: string,
  via: string,
  path: string,
  extra: Partial<Reference> = {},
): Reference {
  return {
    kind,
    targetType: 'topic',
    targetId: topic,
    topic,
    filter: isTopicFilter(topic),
    via,
    path,
    dynamic: false,
    ...extra,
  };
}

/** Escapes a JSON pointer token (RFC 6901 §4). */
export function pointerToken(token: string): string {
  return token.replace(/~/g, '~0').replace(/\//g, '~1');
}

/** Drops repeats (same kind, target and via), keeping the first. */
export function distinctReferences(references: Reference[]): Reference[] {
  const seen = new Set<string>();
  return references.filter((r) => {
    const key = `${r.kind}\u0000${r.targetType}\u0000${r.targetId ?? r.expression}\u0000${r.via}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}
