/**
 * The outgoing references of each configuration entity, read from its row as stored. Pure functions:
 * the graph writes them as edges on every save, export reads them to know what a selection requires.
 *
 * A reference given as a `{{ expr }}` expression (pipelines) is `dynamic` and has no target: it is
 * recorded as unresolved, never guessed. A dashboard topic holding variables (`$line`) is `dynamic`
 * too, with the filter every value could reach (each segment holding a variable becomes `+`: a
 * variable's value is always one topic segment).
 */

/** What a graph node can be. Topics are nodes too: an exact topic path or a filter with `+` / `#`. */
export type EntityType = 'connection' | 'function' | 'model' | 'pipeline' | 'dashboard' | 'folder' | 'topic';

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
type Json<T> = string | T;

const parse = <T>(value: Json<T> | null | undefined, fallback: T): T => {
  if (value === null || value === undefined) return fallback;
  if (typeof value !== 'string') return value;
  try {
    return JSON.parse(value) as T;
  } catch {
    return fallback;
  }
};

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

const EXPRESSION = /\{\{[\s\S]*\}\}/;

/** True when a topic text holds a `+` or `#` wildcard segment. */
export const isTopicFilter = (topic: string): boolean =>
  topic.split('/').some((segment) => segment === '+' || segment === '#');

function topicReference(
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

// ---------------------------------------------------------------------------------------------------
// Connections and functions

/** A connection refers to nothing: functions, pipelines and dashboards refer to it. */
export function connectionReferences(_row: { id: string }): Reference[] {
  return [];
}

export interface FunctionRowLike {
  id: string;
  connection_id: string;
  /** JSON `{ topic, intervalMs?, items? }` or null. */
  uns: Json<{ topic?: string; intervalMs?: number; items?: Record<string, string> } | null> | null;
}

/**
 * A function's references: its connection, and the topics it publishes while the connection runs.
 * A subscribe function publishes below its topic (`<topic>/<item>`), so it publishes `<topic>/#`;
 * `direction` comes from the protocol's function type (the row does not hold it). Without it, a UNS
 * target without `intervalMs` is taken as a subscribe function (a read function needs one).
 */
export function functionReferences(
  row: FunctionRowLike,
  direction?: 'read' | 'write' | 'subscribe',
): Reference[] {
  const out: Reference[] = [
    {
      kind: 'belongs-to',
      targetType: 'connection',
      targetId: row.connection_id,
      via: 'connection',
      path: '/connectionId',
      dynamic: false,
    },
  ];
  const uns = parse(row.uns, null);
  if (isObject(uns) && typeof uns.topic === 'string' && uns.topic.length > 0) {
    const subscribe = direction ? direction === 'subscribe' : uns.intervalMs === undefined;
    const topic = subscribe ? `${uns.topic}/#` : uns.topic;
    out.push(topicReference('publishes', topic, 'uns.topic', '/uns/topic'));
    for (const [key, item] of Object.entries(isObject(uns.items) ? uns.items : {})) {
      if (typeof item === 'string' && item.length > 0)
        out.push(topicReference('publishes', item, `uns.items.${key}`, `/uns/items/${pointer(key)}`));
    }
  }
  return out;
}

// ---------------------------------------------------------------------------------------------------
// Models

export interface ModelRowLike {
  id: string;
  fields: Json<unknown[]>;
}

/** A model's references to other models (`model` fields, walked through objects and arrays). */
export function modelReferences(row: ModelRowLike): Reference[] {
  const out: Reference[] = [];
  const visit = (shape: unknown, at: string, via: string) => {
    if (!isObject(shape)) return;
    const model = shape.model;
    if (isObject(model) && typeof model.id === 'string') {
      out.push({
        kind: 'uses-model',
        targetType: 'model',
        targetId: model.id,
        via,
        path: `${at}/model`,
        dynamic: false,
        ...(typeof model.version === 'number' ? { version: model.version } : {}),
      });
    }
    if (Array.isArray(shape.fields))
      for (const [i, f] of shape.fields.entries())
        visit(f, `${at}/fields/${i}`, `${via}.${isObject(f) ? String(f.name) : i}`);
    if (shape.items !== undefined) visit(shape.items, `${at}/items`, `${via}[]`);
  };
  for (const [i, f] of parse(row.fields, [] as unknown[]).entries())
    visit(f, `/fields/${i}`, isObject(f) ? String(f.name) : String(i));
  return out;
}

export interface ModelBindingRowLike {
  id: string;
  model_id: string;
  topic_prefix: string;
  /** JSON `[{ path, filter, ... }]`: one UNS schema binding per leaf field. */
  leaves: Json<{ path: string; filter: string }[]>;
}

/** A model binding's references: each topic one of the model's leaf fields is bound to. */
export function modelBindingReferences(row: ModelBindingRowLike): Reference[] {
  const leaves = parse(row.leaves, [] as { path: string; filter: string }[]);
  if (leaves.length === 0)
    return [topicReference('binds-topic', `${row.topic_prefix}/#`, row.topic_prefix, '/topicPrefix')];
  return leaves.map((leaf, i) =>
    topicReference('binds-topic', leaf.filter, leaf.path, `/leaves/${i}/filter`),
  );
}

// ---------------------------------------------------------------------------------------------------
// Pipelines

interface NodeLike {
  id: string;
  name?: string;
  type: string;
  parameters?: Record<string, unknown>;
  disabled?: boolean;
}

export interface PipelineRowLike {
  id: string;
  nodes: Json<NodeLike[]>;
}

/** Which parameters of which node types refer to what (see NODE-CONTRACT: parameter names are fixed). */
const NODE_REFERENCES: Record<
  string,
  { parameter: string; kind: ReferenceKind; targetType: EntityType; historyWhen?: string }[]
> = {
  'uns.publish': [{ parameter: 'topic', kind: 'publishes', targetType: 'topic' }],
  'trigger.uns': [{ parameter: 'filter', kind: 'subscribes', targetType: 'topic' }],
  'trigger.connection': [
    { parameter: 'connectionId', kind: 'uses-connection', targetType: 'connection' },
    { parameter: 'functionId', kind: 'triggered-by', targetType: 'function' },
  ],
  'trigger.pipeline': [{ parameter: 'pipelineId', kind: 'triggered-by', targetType: 'pipeline' }],
  'connection.call': [
    { parameter: 'connectionId', kind: 'uses-connection', targetType: 'connection' },
    { parameter: 'functionId', kind: 'uses-function', targetType: 'function' },
  ],
  'uns.fetch': [{ parameter: 'topic', kind: 'reads-topic', targetType: 'topic', historyWhen: 'history' }],
  'model.validate': [{ parameter: 'modelId', kind: 'uses-model', targetType: 'model' }],
  'model.map': [{ parameter: 'modelId', kind: 'uses-model', targetType: 'model' }],
  'pipeline.run': [{ parameter: 'pipelineId', kind: 'runs-pipeline', targetType: 'pipeline' }],
};

/** The node types that carry references, and the parameters that hold them. */
export const REFERENCING_NODE_TYPES: Readonly<Record<string, readonly string[]>> = Object.fromEntries(
  Object.entries(NODE_REFERENCES).map(([type, refs]) => [type, refs.map((r) => r.parameter)]),
);

/** A pipeline's references, one or two per referencing node; `via` is the node's name. */
export function pipelineReferences(row: PipelineRowLike): Reference[] {
  const out: Reference[] = [];
  for (const [i, node] of parse(row.nodes, [] as NodeLike[]).entries()) {
    if (!isObject(node)) continue;
    const specs = NODE_REFERENCES[node.type];
    if (!specs) continue;
    const parameters = isObject(node.parameters) ? node.parameters : {};
    const via = typeof node.name === 'string' && node.name ? node.name : node.id;
    const disabled = node.disabled === true ? { disabled: true } : {};
    for (const spec of specs) {
      const value = parameters[spec.parameter];
      if (typeof value !== 'string' || value.length === 0) continue;
      const kind = spec.historyWhen && parameters.mode === spec.historyWhen ? 'reads-history' : spec.kind;
      const path = `/nodes/${i}/parameters/${spec.parameter}`;
      if (EXPRESSION.test(value)) {
        out.push({
          kind,
          targetType: spec.targetType,
          targetId: null,
          via,
          path,
          dynamic: true,
          expression: value,
          ...disabled,
        });
      } else if (spec.targetType === 'topic') {
        out.push(topicReference(kind, value, via, path, disabled));
      } else {
        out.push({
          kind,
          targetType: spec.targetType,
          targetId: value,
          via,
          path,
          dynamic: false,
          ...disabled,
        });
      }
    }
  }
  return out;
}

// ---------------------------------------------------------------------------------------------------
// Dashboards

const VARIABLE = /\$\{[A-Za-z_][A-Za-z0-9_]*\}|\$[A-Za-z_][A-Za-z0-9_]*/;

/** A topic text with variables as the filter of every topic it can reach: a segment with a variable is `+`. */
export function reachableFilter(text: string): string {
  return text
    .split('/')
    .map((segment) => (VARIABLE.test(segment) ? '+' : segment))
    .join('/');
}

export interface DashboardRowLike {
  id: string;
  folder_id: string | null;
  /** JSON `{ variables, panels, ... }`. */
  definition: Json<{ variables?: unknown[]; panels?: unknown[] }>;
}

/** A dashboard's references: its folder, each panel query's topic or filter, each segment variable's filter. */
export function dashboardReferences(row: DashboardRowLike): Reference[] {
  const out: Reference[] = [];
  if (row.folder_id)
    out.push({
      kind: 'in-folder',
      targetType: 'folder',
      targetId: row.folder_id,
      via: 'folder',
      path: '/folderId',
      dynamic: false,
    });
  const definition = parse(row.definition, {} as { variables?: unknown[]; panels?: unknown[] });
  const add = (text: string, via: string, path: string) => {
    if (VARIABLE.test(text)) {
      out.push(
        topicReference('reads-topic', reachableFilter(text), via, path, { dynamic: true, expression: text }),
      );
    } else out.push(topicReference('reads-topic', text, via, path));
  };
  for (const [i, variable] of (definition.variables ?? []).entries()) {
    if (isObject(variable) && typeof variable.filter === 'string' && variable.filter.length > 0)
      add(variable.filter, `$${String(variable.name)}`, `/variables/${i}/filter`);
  }
  for (const [i, panel] of (definition.panels ?? []).entries()) {
    if (!isObject(panel) || !Array.isArray(panel.queries)) continue;
    const via = typeof panel.id === 'string' ? panel.id : String(i);
    for (const [q, query] of panel.queries.entries()) {
      if (!isObject(query)) continue;
      for (const member of ['topic', 'filter'] as const) {
        const text = query[member];
        if (typeof text === 'string' && text.length > 0)
          add(text, via, `/panels/${i}/queries/${q}/${member}`);
      }
    }
  }
  return out;
}

// ---------------------------------------------------------------------------------------------------

/** Escapes a JSON pointer token (RFC 6901 §4). */
function pointer(token: string): string {
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
