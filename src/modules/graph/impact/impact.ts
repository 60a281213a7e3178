import {
  DependencyGraph,
  type GraphEdge,
  type NodeKey,
  type Relation,
  splitKey,
} from '../edges/dependency-graph.js';

export const IMPACT_ACTIONS = ['delete', 'disable', 'stop', 'update'] as const;
export type ImpactAction = (typeof IMPACT_ACTIONS)[number];
export type Severity = 'breaks' | 'degrades' | 'info';

/** What the impact needs to know of a node. */
export interface NodeFacts {
  /** For people: `pipeline 'Avg'`, `topic v1/a/b`. */
  label: string;
  /** False for a disabled pipeline: what it would do does not happen now. */
  active: boolean;
}

export interface PathStep {
  node: NodeKey;
  /** The relation to the next step (absent on the last, the entity acted on). */
  relation?: Relation;
  via?: string | null;
}

export interface AffectedEntry {
  node: NodeKey;
  severity: Severity;
  reason: string;
  /** From the affected entity to the entity acted on, in the direction of dependence. */
  path: PathStep[];
}

/**
 * For `update`: the verdict on one affected entity from its path (nodes and edges, from it to the
 * entity updated), given the proposed change (update-rules.ts). Absent: the change was not given.
 */
export type UpdateClassifier = (
  nodes: NodeKey[],
  edges: GraphEdge[],
) => { severity: Severity; detail: string };

/** A reference without which the dependent cannot do its work (the rest carry data: topics). */
const HARD: ReadonlySet<Relation> = new Set([
  'uses-connection',
  'uses-function',
  'triggered-by',
  'uses-model',
  'runs-pipeline',
  'in-folder',
]);

const PHRASE: Record<Relation, string> = {
  'uses-connection': 'uses',
  'uses-function': 'calls',
  'belongs-to': 'belongs to',
  'triggered-by': 'is triggered by',
  publishes: 'is published by',
  subscribes: 'subscribes to',
  'reads-topic': 'reads',
  'reads-history': 'reads the history of',
  'uses-model': 'uses',
  'runs-pipeline': 'runs',
  'binds-topic': 'is validated by',
  'in-folder': 'is in',
  matches: 'matches',
};

const RANK: Record<Severity, number> = { breaks: 0, degrades: 1, info: 2 };

/**
 * What an action on `start` does to everything that depends on it, transitively. Per affected entity
 * (topics are steps of paths, not entries) the shortest path that explains it and a severity:
 * - `breaks`: it refers to the entity itself (uses, calls, runs, is triggered by, validates with) and is active;
 * - `degrades`: it depends on it through something else, or only through data (topics it reads);
 * - `info`: it is inactive (a disabled pipeline, a disabled node on the way), the path only passes a
 *   model's validation of a topic, or it goes along with the entity (the functions of a deleted or
 *   stopped connection).
 * An update is judged by `classify` (the rules of update-rules.ts), an inactive dependent being info;
 * without it (no proposed change given) every dependent is info.
 * The functions of a connection go with it, so a path that reaches the connection through one of its
 * functions counts from the function.
 */
export function assessImpact(
  graph: DependencyGraph,
  start: NodeKey,
  action: ImpactAction,
  facts: (key: NodeKey) => NodeFacts,
  classify?: UpdateClassifier,
): AffectedEntry[] {
  const reached = graph.walk(start, 'dependents');
  const out: AffectedEntry[] = [];
  for (const key of reached.keys()) {
    if (key === start || splitKey(key).type === 'topic') continue;
    const steps = DependencyGraph.pathTo(reached, key);
    const edges = steps.slice(0, -1).map((s) => s.edge as GraphEdge);
    const path: PathStep[] = steps.map((s, i) =>
      i < steps.length - 1
        ? { node: s.node, relation: s.edge!.relation, via: s.edge!.via }
        : { node: s.node },
    );
    const reason = describe(
      steps.map((s) => s.node),
      edges,
      facts,
    );
    out.push({
      node: key,
      path,
      ...severityOf(
        steps.map((s) => s.node),
        edges,
        action,
        facts,
        reason,
        classify,
      ),
    });
  }
  return out.sort((a, b) => RANK[a.severity] - RANK[b.severity] || a.path.length - b.path.length);
}

function severityOf(
  nodes: NodeKey[],
  edges: GraphEdge[],
  action: ImpactAction,
  facts: (key: NodeKey) => NodeFacts,
  reason: string,
  classify: UpdateClassifier | undefined,
): { severity: Severity; reason: string } {
  const inactive = nodes.slice(0, -1).find((n) => !facts(n).active);
  if (action === 'update') {
    if (!classify)
      return {
        severity: 'info',
        reason: `${reason}; the proposed change was not given (send \`proposed\`), so it may need to follow the change`,
      };
    const verdict = classify(nodes, edges);
    const off = inactive ? facts(inactive).label : edges.find((e) => e.disabled)?.via;
    if (verdict.severity !== 'info' && off !== undefined)
      return {
        severity: 'info',
        reason: `${reason}; ${verdict.detail}; but ${inactive ? off : `node '${off}'`} is disabled`,
      };
    return { severity: verdict.severity, reason: `${reason}; ${verdict.detail}` };
  }
  if (inactive) return { severity: 'info', reason: `${reason}; ${facts(inactive).label} is disabled` };
  const disabledNode = edges.find((e) => e.disabled);
  if (disabledNode) return { severity: 'info', reason: `${reason}; node '${disabledNode.via}' is disabled` };
  if (edges.some((e) => e.relation === 'binds-topic'))
    return { severity: 'info', reason: `${reason}; only the validation of its values changes` };
  // Functions go with their connection: count from the function.
  let effective = edges;
  if (action === 'delete' || action === 'stop')
    while (effective.length > 0 && effective[effective.length - 1]!.relation === 'belongs-to')
      effective = effective.slice(0, -1);
  if (effective.length === 0)
    return {
      severity: 'info',
      reason: `${reason}; it ${action === 'delete' ? 'is deleted' : 'stops'} with the connection`,
    };
  const first = effective[0]!.relation;
  if (effective.length === 1 && HARD.has(first)) {
    if (action === 'disable' && first === 'triggered-by')
      return { severity: 'degrades', reason: `${reason}; it is no longer triggered` };
    return { severity: 'breaks', reason };
  }
  return { severity: 'degrades', reason };
}

function describe(nodes: NodeKey[], edges: GraphEdge[], facts: (key: NodeKey) => NodeFacts): string {
  let text = facts(nodes[0]!).label;
  for (const [i, edge] of edges.entries()) {
    const via = edge.via && splitKey(edge.from).type === 'pipeline' ? ` (node '${edge.via}')` : '';
    text += `${i > 0 ? ', which' : ''} ${PHRASE[edge.relation]} ${facts(nodes[i + 1]!).label}${via}`;
  }
  return text;
}

/** Whether the impact should stop a delete or stop that is not forced: something breaks or degrades. */
export const isBlocking = (affected: readonly AffectedEntry[]): boolean =>
  affected.some((a) => a.severity !== 'info');
