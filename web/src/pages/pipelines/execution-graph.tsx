import {
  Background,
  type Edge,
  ReactFlow,
  ReactFlowProvider,
  useNodesInitialized,
  useNodesState,
  useReactFlow,
  useStore,
} from '@xyflow/react';
import { useEffect, useMemo } from 'react';
import { type CanvasNode, CanvasNodeView } from './canvas-node';
import type { NodeRun, NodeType, PipelineEdge, PipelineNode } from './pipelines-api';

const nodeTypes = { pipeline: CanvasNodeView };

/** Fits the view to every node once they are measured, and again when the box changes size. */
function FitWhenMeasured() {
  const measured = useNodesInitialized();
  const width = useStore((state) => state.width);
  const height = useStore((state) => state.height);
  const { fitView } = useReactFlow();
  // biome-ignore lint/correctness/useExhaustiveDependencies: the box's size is why it fits again.
  useEffect(() => {
    if (measured) void fitView({ padding: 0.15, maxZoom: 1 });
  }, [measured, fitView, width, height]);
  return null;
}

/**
 * The pipeline's graph as one execution ran it: each node with the status of its last run (the failed
 * node in red, nodes that did not run faded), read-only and fitted to the box.
 */
export function ExecutionGraph(props: {
  nodes: PipelineNode[];
  edges: PipelineEdge[];
  types: NodeType[];
  runs: NodeRun[];
  failedNodeId: string | null;
}) {
  const status = useMemo(() => {
    const byNode = new Map<string, string>();
    for (const run of props.runs) byNode.set(run.nodeId, run.status);
    if (props.failedNodeId) byNode.set(props.failedNodeId, 'failed');
    return byNode;
  }, [props.runs, props.failedNodeId]);
  const shown: CanvasNode[] = props.nodes.map((node) => ({
    id: node.id,
    type: 'pipeline',
    position: node.position ?? { x: 0, y: 0 },
    draggable: false,
    connectable: false,
    selectable: false,
    data: {
      node,
      type: props.types.find((t) => t.type === node.type),
      problems: [],
      runStatus: status.get(node.id) ?? 'not-run',
    },
  }));
  // Kept in state so that xyflow can record each node's measured size (it fits the view by them).
  const [nodes, setNodes, onNodesChange] = useNodesState<CanvasNode>(shown);
  const statusKey = [...status].join(',');
  // biome-ignore lint/correctness/useExhaustiveDependencies: statusKey stands for the statuses.
  useEffect(() => {
    setNodes((current) =>
      current.map((n) => ({ ...n, data: { ...n.data, runStatus: status.get(n.id) ?? 'not-run' } })),
    );
  }, [statusKey, setNodes]);
  const edges: Edge[] = props.edges.map((edge) => ({
    id: edge.id,
    source: edge.source,
    sourceHandle: edge.sourcePort,
    target: edge.target,
    label: edge.sourcePort === 'out' ? undefined : edge.sourcePort,
    animated: status.has(edge.source) && status.has(edge.target),
  }));
  return (
    <div className="execution-graph" data-testid="execution-graph">
      <ReactFlowProvider>
        <ReactFlow
          nodes={nodes}
          onNodesChange={onNodesChange}
          edges={edges}
          nodeTypes={nodeTypes}
          nodesDraggable={false}
          nodesConnectable={false}
          elementsSelectable={false}
          fitView
          fitViewOptions={{ maxZoom: 1, padding: 0.15 }}
        >
          <Background />
          <FitWhenMeasured />
        </ReactFlow>
      </ReactFlowProvider>
    </div>
  );
}
