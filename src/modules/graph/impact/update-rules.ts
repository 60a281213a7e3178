import { type GraphEdge, type NodeKey, splitKey } from '../edges/dependency-graph.js';
import type { Severity } from './impact.js';
import type { ProposedChange } from './proposed-change.js';

/**
 * The impact of an `update` with the proposed change, per dependent. The rules look at the dependent
 * that touches the entity (the first entity on the path from it, topics in between) and at what it uses:
 *
 * breaks (the change removes what it uses):
 * - connection: `protocol` changes (its functions' types belong to the old protocol; pipelines call them);
 * - function: `type` makes it a subscription under a pipeline's call, or no longer a subscription under a
 *   pipeline's connection trigger, or makes a read a write under a call without `confirmWrites`;
 *   `parameters` drops a parameter a calling node passes; `uns` stops publishing the topic a
 *   dashboard or pipeline reads;
 * - model: `fields` removes a field, or changes its type, that a `model.map` node maps, that a
 *   `model.validate` node validates, or that a model embedding it carries; removes the field a
 *   topic read by a dashboard or pipeline is bound to (the topic is no longer bound);
 * - pipeline: `nodes` no longer publish the topic a dashboard or pipeline reads.
 * degrades (it keeps working, differently):
 * - connection: `readOnly` becomes true under a pipeline node that writes through it;
 * - function: `type` turns a write into a read, or a read into a write under `confirmWrites`;
 *   `uns.intervalMs` changes the pace of the topic a dashboard or pipeline reads;
 * - model: `fields` makes a field required; any field change under a topic the model validates;
 * - pipeline: `enabled: false` under a pipeline that runs it or is triggered by it;
 * - anything beyond the touching dependent, when that one breaks or degrades.
 * info: everything else, naming the members that changed.
 */
export interface UpdateFacts {
  proposed: ProposedChange;
  connection?: { protocol: string; readOnly: boolean };
  fn?: {
    direction: string | undefined;
    nextDirection: string | undefined;
    nextType: string;
    parameters: string[];
    uns: { topic: string; intervalMs: number | null } | null;
  };
  /** A model's fields: what the proposed fields remove, retype or make required (dotted paths). */
  fields?: { removed: string[]; retyped: string[]; required: string[] };
  /** A pipeline's topics after the change (literal `uns.publish` topics). */
  published?: Set<string>;
  /** Nodes of the pipelines among the dependents, by pipeline id. */
  pipelineNodes: Map<string, { name?: unknown; type?: unknown; parameters?: unknown }[]>;
  /** For a connection: the direction of each of its functions. */
  functionDirections: Map<string, string | undefined>;
  label: (key: NodeKey) => string;
}

export interface Verdict {
  severity: Severity;
  detail: string;
}

const info = (facts: UpdateFacts): Verdict => ({
  severity: 'info',
  detail: `the change to ${facts.proposed.members.join(', ') || 'nothing'} does not touch what it uses`,
});

type Params = Record<string, unknown>;

function nodeOf(facts: UpdateFacts, pipeline: NodeKey, via: string | null): Params | undefined {
  const nodes = facts.pipelineNodes.get(splitKey(pipeline).id) ?? [];
  const node = nodes.find((n) => n.name === via);
  return (node?.parameters ?? undefined) as Params | undefined;
}

const nodeTypeOf = (facts: UpdateFacts, pipeline: NodeKey, via: string | null) =>
  (facts.pipelineNodes.get(splitKey(pipeline).id) ?? []).find((n) => n.name === via)?.type;

/** The verdict for one affected entity, from its path to the entity updated (`nodes[last]`). */
export function classifyUpdate(facts: UpdateFacts, nodes: NodeKey[], edges: GraphEdge[]): Verdict {
  const n = nodes.length;
  let j = n - 2;
  while (j > 0 && splitKey(nodes[j]!).type === 'topic') j--;
  const touch = nodes[j]!;
  const verdict = touchVerdict(
    facts,
    touch,
    edges[j]!,
    nodes[n - 2]!,
    edges[n - 2]!,
    splitKey(nodes[n - 1]!).type,
  );
  if (j === 0 || verdict.severity === 'info') return verdict;
  return {
    severity: 'degrades',
    detail: `it depends on ${facts.label(touch)}, which ${verdict.severity}: ${verdict.detail}`,
  };
}

function touchVerdict(
  facts: UpdateFacts,
  touch: NodeKey,
  touchEdge: GraphEdge,
  nextToStart: NodeKey,
  lastEdge: GraphEdge,
  startType: string,
): Verdict {
  const p = facts.proposed;
  const touchType = splitKey(touch).type;
  const via = touchEdge.via;
  const topic = splitKey(nextToStart).type === 'topic' ? splitKey(nextToStart).id : null;
  switch (startType) {
    case 'connection': {
      const c = facts.connection!;
      if (p.protocol !== undefined && p.protocol !== c.protocol) {
        return touchType === 'function'
          ? { severity: 'breaks', detail: `protocol: its type belongs to ${c.protocol}, not ${p.protocol}` }
          : {
              severity: 'breaks',
              detail: `protocol: node '${via}' calls it as ${c.protocol}, and it becomes ${p.protocol}`,
            };
      }
      if (p.readOnly === true && !c.readOnly && touchType === 'pipeline') {
        const node = nodeOf(facts, touch, via);
        const fnId = typeof node?.functionId === 'string' ? node.functionId : '';
        if (facts.functionDirections.get(fnId) === 'write')
          return {
            severity: 'degrades',
            detail: `readOnly: node '${via}' writes through it, and a read-only connection refuses writes`,
          };
      }
      return info(facts);
    }
    case 'function': {
      const f = facts.fn!;
      if (touchType === 'pipeline' && touchEdge.relation === 'uses-function') {
        const node = nodeOf(facts, touch, via);
        if (f.nextDirection !== f.direction) {
          if (f.nextDirection === 'subscribe')
            return {
              severity: 'breaks',
              detail: `type: it becomes a subscription (${f.nextType}), which node '${via}' cannot call`,
            };
          if (f.nextDirection === 'write' && node?.confirmWrites !== true)
            return {
              severity: 'breaks',
              detail: `type: it becomes a write (${f.nextType}), and node '${via}' does not set confirmWrites`,
            };
          return {
            severity: 'degrades',
            detail: `type: node '${via}' now ${f.nextDirection === 'write' ? 'writes to' : 'reads from'} the device (${f.nextType})`,
          };
        }
        if (p.parameters) {
          const passed = Object.keys((node?.parameters ?? {}) as Params);
          const dropped = passed.find((k) => f.parameters.includes(k) && !p.parameters!.includes(k));
          if (dropped)
            return {
              severity: 'breaks',
              detail: `parameters: '${dropped}', which node '${via}' passes, is no longer declared`,
            };
        }
        return info(facts);
      }
      if (
        touchType === 'pipeline' &&
        touchEdge.relation === 'triggered-by' &&
        f.nextDirection !== 'subscribe'
      )
        return {
          severity: 'breaks',
          detail: `type: it is no longer a subscription (${f.nextType}), so node '${via}' is never triggered`,
        };
      if (topic !== null && lastEdge.relation === 'publishes' && p.uns !== undefined) {
        if (p.uns === null || p.uns.topic !== topic)
          return { severity: 'breaks', detail: `uns.topic: it no longer publishes ${topic}` };
        if (p.uns.intervalMs !== f.uns?.intervalMs)
          return {
            severity: 'degrades',
            detail: `uns.intervalMs: ${topic} is read every ${p.uns.intervalMs ?? 'default'} ms instead of ${f.uns?.intervalMs ?? 'default'} ms`,
          };
      }
      return info(facts);
    }
    case 'model': {
      const d = facts.fields;
      if (!d) return info(facts);
      const changed = [...d.removed, ...d.retyped];
      const what = (f: string) => (d.removed.includes(f) ? `'${f}' is removed` : `'${f}' changes type`);
      if (topic !== null && lastEdge.relation === 'binds-topic') {
        // The edge's `via` is the bound leaf's field path (`bearing/temperature`).
        const leaf = (lastEdge.via ?? '').replaceAll('/', '.');
        const gone = d.removed.find((f) => leaf === f || leaf.startsWith(`${f}.`));
        if (gone)
          return {
            severity: 'breaks',
            detail: `fields: '${gone}' is removed, so ${topic} is no longer bound to the model`,
          };
        const all = [...changed, ...d.required];
        return all.length > 0
          ? {
              severity: 'degrades',
              detail: `fields: values of ${topic} are validated against the changed fields (${all.join(', ')})`,
            }
          : info(facts);
      }
      if (touchType === 'pipeline' && nodeTypeOf(facts, touch, via) === 'model.map') {
        const mapped = Object.keys(((nodeOf(facts, touch, via)?.mapping ?? {}) as Params) || {});
        const hit = changed.find((f) => mapped.some((m) => f === m || f.startsWith(`${m}.`)));
        if (hit) return { severity: 'breaks', detail: `fields: ${what(hit)}, and node '${via}' maps it` };
      } else if (changed.length > 0) {
        const user = touchType === 'pipeline' ? `node '${via}' validates with it` : 'it embeds the model';
        return { severity: 'breaks', detail: `fields: ${what(changed[0]!)}, and ${user}` };
      }
      if (d.required.length > 0)
        return {
          severity: 'degrades',
          detail: `fields: '${d.required[0]}' becomes required, so values without it are no longer valid`,
        };
      return info(facts);
    }
    case 'pipeline': {
      if (
        topic !== null &&
        lastEdge.relation === 'publishes' &&
        facts.published &&
        !facts.published.has(topic)
      )
        return { severity: 'breaks', detail: `nodes: it no longer publishes ${topic}` };
      if (p.enabled === false && touchType === 'pipeline') {
        if (touchEdge.relation === 'triggered-by')
          return {
            severity: 'degrades',
            detail: `enabled: it is disabled, so node '${via}' is no longer triggered`,
          };
        if (touchEdge.relation === 'runs-pipeline')
          return {
            severity: 'degrades',
            detail: `enabled: node '${via}' runs a pipeline that becomes disabled`,
          };
      }
      return info(facts);
    }
    default:
      return info(facts);
  }
}
