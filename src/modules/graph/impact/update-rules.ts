import type { Kysely } from 'kysely';
import type { Database } from '../../../storage/tables.js';
import { type GraphEdge, type NodeKey, splitKey } from '../edges/dependency-graph.js';
import type { Severity } from './impact.js';

/**
 * The impact of an `update` with the proposed change, per dependent. The rules look at the dependent
 * that touches the entity (the first entity on the path from it, topics in between) and at what it uses;
 * each kind judges an update of its own entities (`UpdateRules.verdict`, beside its module):
 *
 * - breaks: the change removes what the touching dependent uses (a connection's protocol under its
 *   functions and calls, a function's type under a call, a model's field under a mapping, a topic no
 *   longer published under its reader ...);
 * - degrades: it keeps working, differently (a connection made read-only under a writing node ...), and
 *   anything beyond the touching dependent when that one breaks or degrades;
 * - info: everything else, naming the members that changed.
 */

/** A part of a dependent that refers to the entity (a pipeline node, by its name): what the rules read of it. */
export interface ReferringPart {
  name?: unknown;
  type?: unknown;
  parameters?: unknown;
}

/** Where an update reaches one dependent: the dependent that touches the entity updated, and how. */
export interface UpdateStep {
  /** The dependent that touches the entity (the first entity on the path from the affected one). */
  touch: NodeKey;
  touchType: string;
  /** The touching dependent's edge on the path (its relation; `via`, a node name or a panel id). */
  touchEdge: GraphEdge;
  via: string | null;
  /** The topic next to the entity on the path, when the path reaches it through a topic. */
  topic: string | null;
  /** The edge that reaches the entity itself. */
  lastEdge: GraphEdge;
  /** The touching dependent's part named `via` (a pipeline's node), when its kind tells its parts. */
  part(): ReferringPart | undefined;
}

export interface Verdict {
  severity: Severity;
  detail: string;
}

/** How a kind's proposed update is read and judged (`EntityKind.update`). */
export interface UpdateRules<Change = unknown> {
  /** The members of its body a proposed change may name; null: any (no rule reads them). */
  readonly members: readonly string[] | null;
  /**
   * Reads the members the rules need from the proposed body (400 naming one of the wrong type) and what
   * they compare it with: the entity as stored now.
   */
  read?(
    db: Kysely<Database>,
    organizationId: string,
    id: string,
    proposed: Record<string, unknown>,
  ): Promise<Change>;
  /** The verdict on one dependent of the entity updated; undefined: not touched (info). */
  verdict?(change: Change, step: UpdateStep): Verdict | undefined;
  /** As a dependent: the parts of each of its entities that refer (a pipeline's nodes), by entity id. */
  parts?(db: Kysely<Database>, organizationId: string, ids: string[]): Promise<Map<string, ReferringPart[]>>;
}

/** What the verdicts of one update need: the change as its kind read it, and the dependents' parts. */
export interface UpdateFacts {
  /** The members given, for reasons ("the change to name, description does not touch ..."). */
  members: string[];
  change: unknown;
  verdict: UpdateRules['verdict'];
  /** The referring parts of the dependents, by node key. */
  parts: ReadonlyMap<NodeKey, ReferringPart[]>;
  label: (key: NodeKey) => string;
}

const info = (facts: UpdateFacts): Verdict => ({
  severity: 'info',
  detail: `the change to ${facts.members.join(', ') || 'nothing'} does not touch what it uses`,
});

/** The verdict for one affected entity, from its path to the entity updated (`nodes[last]`). */
export function classifyUpdate(facts: UpdateFacts, nodes: NodeKey[], edges: GraphEdge[]): Verdict {
  const n = nodes.length;
  let j = n - 2;
  while (j > 0 && splitKey(nodes[j]!).type === 'topic') j--;
  const touch = nodes[j]!;
  const nextToStart = splitKey(nodes[n - 2]!);
  const via = edges[j]!.via;
  const step: UpdateStep = {
    touch,
    touchType: splitKey(touch).type,
    touchEdge: edges[j]!,
    via,
    topic: nextToStart.type === 'topic' ? nextToStart.id : null,
    lastEdge: edges[n - 2]!,
    part: () => facts.parts.get(touch)?.find((p) => p.name === via),
  };
  const verdict = facts.verdict?.(facts.change, step) ?? info(facts);
  if (j === 0 || verdict.severity === 'info') return verdict;
  return {
    severity: 'degrades',
    detail: `it depends on ${facts.label(touch)}, which ${verdict.severity}: ${verdict.detail}`,
  };
}
