import type { StoredEdge } from './edges.repository.js';
import { type EntityType, REVERSED_KINDS, type ReferenceKind } from './references.js';
import { topicsOverlap } from './topic-overlap.js';

/** A node of the graph: `<type>:<id>`, a topic's id being its path or filter (`topic:v1/a/+`). */
export type NodeKey = string;

export const nodeKey = (type: string, id: string): NodeKey => `${type}:${id}`;

export function splitKey(key: NodeKey): { type: EntityType; id: string } {
  const at = key.indexOf(':');
  return { type: key.slice(0, at) as EntityType, id: key.slice(at + 1) };
}

/** `matches`: a topic or filter that is read, linked to a published (or bound) one that can name the same topic. */
export type Relation = ReferenceKind | 'matches';

export interface GraphEdge {
  /** The entity that holds the reference (for `matches`, the filter that is read). */
  from: NodeKey;
  to: NodeKey;
  relation: Relation;
  via: string | null;
  disabled: boolean;
  /** Of the two ends, the one that depends on the other (`to` is published by `from`: the topic depends). */
  dependent: NodeKey;
  dependency: NodeKey;
}

/** A dynamic reference: its target is known only when the pipeline runs. */
export interface UnresolvedReference {
  relation: ReferenceKind;
  targetType: EntityType;
  via: string;
  expression: string | null;
}

export interface Reached {
  depth: number;
  /** The node one step closer to the start, and the edge between them. */
  parent: NodeKey | null;
  edge: GraphEdge | null;
}

const CONSUMING: ReadonlySet<string> = new Set(['reads-topic', 'reads-history', 'subscribes']);
const PRODUCING: ReadonlySet<string> = new Set(['publishes', 'binds-topic']);

/**
 * An organization's dependency graph, built from its stored edges. Topics are nodes: what reads a topic
 * or filter depends on it, a topic depends on what publishes it (or binds it to a model), and a filter
 * that is read is linked (`matches`) to every published topic or filter it overlaps.
 */
export class DependencyGraph {
  readonly edges: GraphEdge[] = [];
  readonly nodes = new Set<NodeKey>();
  readonly unresolved = new Map<NodeKey, UnresolvedReference[]>();
  private readonly down = new Map<NodeKey, GraphEdge[]>();
  private readonly up = new Map<NodeKey, GraphEdge[]>();

  /** `topics`: topic texts to place in the graph even when no edge names them (a focus topic). */
  constructor(rows: readonly StoredEdge[], topics: readonly string[] = []) {
    const consumed = new Set<string>(topics);
    const produced = new Set<string>(topics);
    for (const row of rows) {
      const from = nodeKey(row.from_type as EntityType, row.from_id);
      this.nodes.add(from);
      if (row.to_id === null) {
        const list = this.unresolved.get(from) ?? [];
        list.push({
          relation: row.relation as ReferenceKind,
          targetType: row.to_type as EntityType,
          via: row.via,
          expression: row.expression,
        });
        this.unresolved.set(from, list);
        continue;
      }
      const relation = row.relation as ReferenceKind;
      const to = nodeKey(row.to_type as EntityType, row.to_id);
      const reversed = REVERSED_KINDS.has(relation);
      this.add({
        from,
        to,
        relation,
        via: row.via,
        disabled: Number(row.disabled) === 1,
        dependent: reversed ? to : from,
        dependency: reversed ? from : to,
      });
      if (row.to_type === 'topic') {
        if (CONSUMING.has(relation)) consumed.add(row.to_id);
        if (PRODUCING.has(relation)) produced.add(row.to_id);
      }
    }
    for (const topic of topics) this.nodes.add(nodeKey('topic', topic));
    for (const c of consumed) {
      for (const p of produced) {
        if (c === p || !topicsOverlap(c, p)) continue;
        const from = nodeKey('topic', c);
        const to = nodeKey('topic', p);
        this.add({
          from,
          to,
          relation: 'matches',
          via: null,
          disabled: false,
          dependent: from,
          dependency: to,
        });
      }
    }
  }

  private add(edge: GraphEdge): void {
    this.edges.push(edge);
    this.nodes.add(edge.from);
    this.nodes.add(edge.to);
    const down = this.down.get(edge.dependent);
    if (down) down.push(edge);
    else this.down.set(edge.dependent, [edge]);
    const up = this.up.get(edge.dependency);
    if (up) up.push(edge);
    else this.up.set(edge.dependency, [edge]);
  }

  /** The edges to what `key` depends on. */
  dependenciesOf(key: NodeKey): readonly GraphEdge[] {
    return this.down.get(key) ?? [];
  }

  /** The edges from what depends on `key`. */
  dependentsOf(key: NodeKey): readonly GraphEdge[] {
    return this.up.get(key) ?? [];
  }

  /**
   * Breadth first from `start` towards its dependencies or its dependents, at most `maxDepth` steps:
   * each node reached with its shortest distance and the step that reached it (the start at depth 0).
   */
  walk(start: NodeKey, direction: 'dependencies' | 'dependents', maxDepth = Number.POSITIVE_INFINITY) {
    const reached = new Map<NodeKey, Reached>([[start, { depth: 0, parent: null, edge: null }]]);
    let frontier = [start];
    for (let depth = 1; depth <= maxDepth && frontier.length > 0; depth++) {
      const next: NodeKey[] = [];
      for (const node of frontier) {
        const edges = direction === 'dependencies' ? this.dependenciesOf(node) : this.dependentsOf(node);
        for (const edge of edges) {
          const other = direction === 'dependencies' ? edge.dependency : edge.dependent;
          if (reached.has(other)) continue;
          reached.set(other, { depth, parent: node, edge });
          next.push(other);
        }
      }
      frontier = next;
    }
    return reached;
  }

  /** The steps from `key` back to the start of a walk: `[key, ..., start]` with the edge leaving each. */
  static pathTo(reached: Map<NodeKey, Reached>, key: NodeKey): { node: NodeKey; edge: GraphEdge | null }[] {
    const path: { node: NodeKey; edge: GraphEdge | null }[] = [];
    for (let at: NodeKey | null = key; at !== null; ) {
      const step: Reached = reached.get(at)!;
      path.push({ node: at, edge: step.edge });
      at = step.parent;
    }
    return path;
  }

  /**
   * The neighbourhood of `start` within `depth` steps: what it depends on, what depends on it, or both;
   * with every edge between two of those nodes.
   */
  neighbourhood(start: NodeKey, depth: number, direction: 'dependencies' | 'dependents' | 'both') {
    const nodes = new Map<NodeKey, number>();
    for (const d of direction === 'both' ? (['dependencies', 'dependents'] as const) : [direction]) {
      for (const [key, step] of this.walk(start, d, depth)) {
        nodes.set(key, Math.min(nodes.get(key) ?? step.depth, step.depth));
      }
    }
    const edges = this.edges.filter((e) => nodes.has(e.from) && nodes.has(e.to));
    return { nodes, edges };
  }
}
