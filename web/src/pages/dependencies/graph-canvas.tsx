import { Graph, layout } from '@dagrejs/dagre';
import { Background, Controls, type Edge, MarkerType, type Node, Position, ReactFlow } from '@xyflow/react';
import '@xyflow/react/dist/style.css';
import { useMemo } from 'react';
import { type FocusedGraph, type GraphNode, TYPE_LABEL } from './dependencies-api';

const WIDTH = 220;
const HEIGHT = 58;

/** Positions the nodes left to right with dagre: what depends on something stands left of it. */
function laidOut(graph: FocusedGraph): { nodes: Node[]; edges: Edge[] } {
  const g = new Graph();
  g.setGraph({ rankdir: 'LR', nodesep: 24, ranksep: 90 });
  g.setDefaultEdgeLabel(() => ({}));
  for (const n of graph.nodes) g.setNode(n.key, { width: WIDTH, height: HEIGHT });
  for (const e of graph.edges) {
    const [from, to] = e.dependent === e.from ? [e.from, e.to] : [e.to, e.from];
    g.setEdge(from, to);
  }
  layout(g);
  const nodes: Node[] = graph.nodes.map((n) => {
    const at = g.node(n.key) as { x: number; y: number };
    return {
      id: n.key,
      position: { x: at.x - WIDTH / 2, y: at.y - HEIGHT / 2 },
      data: { label: <NodeLabel node={n} /> },
      className: `dep-node dep-node-${n.type}${n.key === graph.focus ? ' dep-node-focus' : ''}${n.missing ? ' dep-node-missing' : ''}`,
      sourcePosition: Position.Right,
      targetPosition: Position.Left,
      draggable: false,
      connectable: false,
    };
  });
  const edges: Edge[] = graph.edges.map((e, i) => {
    const [source, target] = e.dependent === e.from ? [e.from, e.to] : [e.to, e.from];
    return {
      id: `e${i}`,
      source,
      target,
      label: e.relation,
      className: e.disabled ? 'dep-edge-disabled' : undefined,
      markerEnd: { type: MarkerType.ArrowClosed },
    };
  });
  return { nodes, edges };
}

function NodeLabel({ node }: { node: GraphNode }) {
  return (
    <span className="dep-node-label" data-node-key={node.key}>
      <span className="dep-node-type">{TYPE_LABEL[node.type]}</span>
      <span className="dep-node-name">
        {node.redacted ? 'hidden (no access)' : node.missing ? 'missing' : (node.name ?? node.id)}
      </span>
      {node.status && <span className="dep-node-status">{node.status}</span>}
    </span>
  );
}

/**
 * The graph around the focus, laid out automatically; an arrow points from what depends toward what it
 * depends on. Clicking a node focuses the graph on it.
 */
export function GraphCanvas(props: { graph: FocusedGraph; onSelect: (node: GraphNode) => void }) {
  const { nodes, edges } = useMemo(() => laidOut(props.graph), [props.graph]);
  const byKey = useMemo(() => new Map(props.graph.nodes.map((n) => [n.key, n])), [props.graph]);
  return (
    <section className="dep-canvas" aria-label="Dependency graph">
      <ReactFlow
        nodes={nodes}
        edges={edges}
        fitView
        nodesDraggable={false}
        nodesConnectable={false}
        onNodeClick={(_, node) => {
          const n = byKey.get(node.id);
          if (n) props.onSelect(n);
        }}
      >
        <Background />
        <Controls showInteractive={false} />
      </ReactFlow>
    </section>
  );
}
