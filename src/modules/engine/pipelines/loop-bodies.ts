import { nodeType } from '../nodes/node-types.js';
import type { GraphProblem, PipelineEdge, PipelineNode } from './pipeline-definition.js';

export const LOOP_TYPE = 'flow.for-each';

/**
 * The body of each for-each node: every node reachable from its `item` port (nested loops' bodies
 * included). The engine runs a body once per element; everything else runs once.
 */
export function loopBodies(nodes: PipelineNode[], edges: PipelineEdge[]): Map<string, Set<string>> {
  const bodies = new Map<string, Set<string>>();
  for (const loop of nodes.filter((n) => n.type === LOOP_TYPE)) {
    const body = new Set<string>();
    const stack = edges.filter((e) => e.source === loop.id && e.sourcePort === 'item').map((e) => e.target);
    while (stack.length > 0) {
      const id = stack.pop()!;
      if (body.has(id) || id === loop.id) continue;
      body.add(id);
      for (const e of edges) if (e.source === id) stack.push(e.target);
    }
    bodies.set(loop.id, body);
  }
  return bodies;
}

/** The nodes a scope runs itself: `scope` without the bodies of the loops inside it. */
export function directNodes(scope: PipelineNode[], bodies: Map<string, Set<string>>): PipelineNode[] {
  const inner = new Set<string>();
  for (const node of scope) for (const id of bodies.get(node.id) ?? []) inner.add(id);
  return scope.filter((n) => !inner.has(n.id));
}

/**
 * Loop bodies the engine cannot run: a node fed both from a loop's body and from its `done` (or `error`)
 * port, or a body node fed from outside the loop (use `$node` to read values from before the loop).
 */
export function loopProblems(nodes: PipelineNode[], edges: PipelineEdge[]): GraphProblem[] {
  const problems: GraphProblem[] = [];
  const byId = new Map(nodes.map((n) => [n.id, n]));
  for (const [loopId, body] of loopBodies(nodes, edges)) {
    const loopName = byId.get(loopId)?.name ?? loopId;
    edges.forEach((e, i) => {
      if (!body.has(e.target) || body.has(e.source)) return;
      if (e.source === loopId && e.sourcePort === 'item') return;
      problems.push({
        nodeId: e.target,
        path: `/edges/${i}`,
        message:
          e.source === loopId
            ? `is in the loop body of ${JSON.stringify(loopName)} and also on its ${e.sourcePort} port`
            : `feeds the loop body of ${JSON.stringify(loopName)} from outside it (read earlier values with $node instead)`,
      });
    });
    for (const id of body)
      if (nodeType(byId.get(id)?.type ?? '')?.category === 'trigger')
        problems.push({
          nodeId: id,
          path: '/edges',
          message: `a trigger cannot be in the loop body of ${JSON.stringify(loopName)}`,
        });
  }
  return problems;
}
