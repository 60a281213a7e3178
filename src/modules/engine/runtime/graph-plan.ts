import { directNodes, loopBodies } from '../pipelines/loop-bodies.js';
import type { PipelineNode } from '../pipelines/pipeline-definition.js';
import type { ExecutionDefinition } from '../queue/executions.repository.js';

/**
 * How an execution's graph is walked: its nodes in topological order, each for-each's body, and the
 * nodes of the top level. Executions of one pipeline version share one frozen definition
 * (execution-rows.ts), so its plan is worked out once.
 */
export interface Plan {
  order: PipelineNode[];
  bodies: Map<string, Set<string>>;
  top: PipelineNode[];
}

/** Plans of the definitions executions share (frozen, one per pipeline version: execution-rows.ts). */
const plans = new WeakMap<ExecutionDefinition, Plan>();

/** A definition's run order, loop bodies and top level: worked out once for a shared definition. */
export function planOf(definition: ExecutionDefinition): Plan {
  const cached = plans.get(definition);
  if (cached) return cached;
  const order = topologicalOrder(definition.nodes, definition.edges);
  const bodies = loopBodies(definition.nodes, definition.edges);
  const plan = { order, bodies, top: directNodes(order, bodies) };
  // A definition that is not frozen may still change (a node test builds its own): planned each time.
  if (Object.isFrozen(definition)) plans.set(definition, plan);
  return plan;
}

/** The nodes in an order where every node comes after its upstream nodes (the graph was validated acyclic). */
export function topologicalOrder(
  nodes: PipelineNode[],
  edges: { source: string; target: string }[],
): PipelineNode[] {
  const indegree = new Map(nodes.map((n) => [n.id, 0]));
  for (const e of edges)
    if (indegree.has(e.target) && indegree.has(e.source)) indegree.set(e.target, indegree.get(e.target)! + 1);
  const byId = new Map(nodes.map((n) => [n.id, n]));
  const ready = nodes.filter((n) => indegree.get(n.id) === 0).map((n) => n.id);
  const order: PipelineNode[] = [];
  while (ready.length > 0) {
    const id = ready.shift()!;
    order.push(byId.get(id)!);
    for (const e of edges)
      if (e.source === id && indegree.has(e.target)) {
        indegree.set(e.target, indegree.get(e.target)! - 1);
        if (indegree.get(e.target) === 0) ready.push(e.target);
      }
  }
  return order;
}
