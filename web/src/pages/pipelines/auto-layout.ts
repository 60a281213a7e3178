import type { Pipeline, PipelineNode } from './pipelines-api';

/** Positions for nodes saved without one: a left-to-right layout by dagre (loaded only then). */
export async function withPositions(pipeline: Pipeline): Promise<PipelineNode[]> {
  if (pipeline.nodes.every((n) => n.position)) return pipeline.nodes;
  const { default: dagre } = await import('@dagrejs/dagre');
  const g = new dagre.graphlib.Graph();
  g.setGraph({ rankdir: 'LR', nodesep: 40, ranksep: 80 });
  g.setDefaultEdgeLabel(() => ({}));
  for (const n of pipeline.nodes) g.setNode(n.id, { width: 180, height: 60 });
  for (const e of pipeline.edges) g.setEdge(e.source, e.target);
  dagre.layout(g);
  return pipeline.nodes.map((n) =>
    n.position ? n : { ...n, position: { x: g.node(n.id).x, y: g.node(n.id).y } },
  );
}
