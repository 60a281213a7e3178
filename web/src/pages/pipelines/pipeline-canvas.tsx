import {
  addEdge,
  Background,
  type Connection,
  Controls,
  type Edge,
  ReactFlow,
  useEdgesState,
  useNodesInitialized,
  useNodesState,
  useReactFlow,
} from '@xyflow/react';
import '@xyflow/react/dist/style.css';
import { type DragEvent, forwardRef, useEffect, useImperativeHandle, useMemo, useRef } from 'react';
import { type CanvasNode, CanvasNodeView } from './canvas-node';
import { Catalogue, DRAG_TYPE } from './catalogue';
import type { GraphProblem, NodeType, PipelineEdge, PipelineNode } from './pipelines-api';

const nodeTypes = { pipeline: CanvasNodeView };

export const toCanvasNode = (node: PipelineNode, types: NodeType[]): CanvasNode => ({
  id: node.id,
  type: 'pipeline',
  position: node.position ?? { x: 0, y: 0 },
  data: { node, type: types.find((t) => t.type === node.type), problems: [] },
});

export const toCanvasEdge = (edge: PipelineEdge): Edge => ({
  id: edge.id,
  source: edge.source,
  sourceHandle: edge.sourcePort,
  target: edge.target,
  label: edge.sourcePort === 'out' ? undefined : edge.sourcePort,
});

/** What the editor reads from and writes to the canvas. */
export interface CanvasHandle {
  graph(): { nodes: PipelineNode[]; edges: PipelineEdge[] };
  updateNode(node: PipelineNode): void;
  removeNode(id: string): void;
}

/** A node id not used yet, from the type name ("jsonata-2"). */
function freshId(type: string, taken: Set<string>) {
  const base = type
    .split('.')
    .pop()!
    .replace(/[^A-Za-z0-9_-]/g, '-');
  for (let n = 1; ; n++) if (!taken.has(`${base}-${n}`)) return `${base}-${n}`;
}

function freshName(title: string, taken: Set<string>) {
  if (!taken.has(title)) return title;
  for (let n = 2; ; n++) if (!taken.has(`${title} ${n}`)) return `${title} ${n}`;
}

/** The canvas with the catalogue beside it: nodes are dragged in, ports connected, a node selected. */
export const PipelineCanvas = forwardRef<
  CanvasHandle,
  {
    initialNodes: CanvasNode[];
    initialEdges: Edge[];
    types: NodeType[];
    problems: GraphProblem[];
    /** Node status in the execution open in the inspector, by node id. */
    runStatus: Record<string, string>;
    /** A short output or error per node id, from the run the debug panel shows. */
    badges?: Record<string, string>;
    selected: string | null;
    onSelect: (id: string | null) => void;
    onChange: () => void;
  }
>(function PipelineCanvas(props, ref) {
  const [nodes, setNodes, onNodesChange] = useNodesState<CanvasNode>(props.initialNodes);
  const [edges, setEdges, onEdgesChange] = useEdgesState<Edge>(props.initialEdges);
  const flow = useReactFlow();
  const { onChange } = props;
  const box = useRef<HTMLDivElement>(null);
  const measured = useNodesInitialized();
  // Opens fitted to every node, once xyflow has measured them (their sizes decide the fit); a graph
  // opened empty is not moved under the nodes being dropped on it.
  const fitted = useRef(props.initialNodes.length === 0);
  useEffect(() => {
    if (!measured || fitted.current || nodes.length === 0) return;
    fitted.current = true;
    void flow.fitView({ padding: 0.15, maxZoom: 1 });
  }, [measured, flow, nodes.length]);
  // The selected node is panned into view when it is not wholly inside the canvas (the side panel or
  // a narrow screen may have left it outside).
  // biome-ignore lint/correctness/useExhaustiveDependencies: on a new selection only.
  useEffect(() => {
    const id = props.selected;
    const element = box.current;
    if (!id || !element) return;
    const frame = requestAnimationFrame(() => {
      const node = flow.getInternalNode(id);
      if (!node) return;
      const { x, y, zoom } = flow.getViewport();
      const width = node.measured.width ?? 150;
      const height = node.measured.height ?? 40;
      const left = node.internals.positionAbsolute.x * zoom + x;
      const top = node.internals.positionAbsolute.y * zoom + y;
      const margin = 16;
      const inside =
        left >= margin &&
        top >= margin &&
        left + width * zoom <= element.clientWidth - margin &&
        top + height * zoom <= element.clientHeight - margin;
      if (!inside)
        void flow.setCenter(
          node.internals.positionAbsolute.x + width / 2,
          node.internals.positionAbsolute.y + height / 2,
          { zoom, duration: 200 },
        );
    });
    return () => cancelAnimationFrame(frame);
  }, [props.selected]);

  useImperativeHandle(ref, () => ({
    graph: () => ({
      nodes: nodes.map((n) => ({
        ...n.data.node,
        position: { x: Math.round(n.position.x), y: Math.round(n.position.y) },
      })),
      edges: edges.map((e) => ({
        id: e.id,
        source: e.source,
        sourcePort: e.sourceHandle ?? 'out',
        target: e.target,
      })),
    }),
    updateNode: (node) => {
      setNodes((old) => old.map((n) => (n.id === node.id ? { ...n, data: { ...n.data, node } } : n)));
      onChange();
    },
    removeNode: (id) => {
      setNodes((old) => old.filter((n) => n.id !== id));
      setEdges((old) => old.filter((e) => e.source !== id && e.target !== id));
      onChange();
    },
  }));

  const add = (type: NodeType, position: { x: number; y: number }) => {
    const ids = new Set(nodes.map((n) => n.id));
    const names = new Set(nodes.map((n) => n.data.node.name));
    const node: PipelineNode = {
      id: freshId(type.type, ids),
      name: freshName(type.title, names),
      type: type.type,
      parameters: {},
      position,
    };
    setNodes((old) => [
      ...old.map((n) => ({ ...n, selected: false })),
      { ...toCanvasNode(node, props.types), selected: true },
    ]);
    props.onSelect(node.id);
    onChange();
  };

  const onDrop = (event: DragEvent) => {
    event.preventDefault();
    const type = props.types.find((t) => t.type === event.dataTransfer.getData(DRAG_TYPE));
    if (!type) return;
    add(type, flow.screenToFlowPosition({ x: event.clientX, y: event.clientY }));
  };

  const onConnect = (connection: Connection) => {
    const port = connection.sourceHandle ?? 'out';
    setEdges((old) =>
      addEdge(
        {
          ...connection,
          id: `${connection.source}-${port}-${connection.target}`,
          label: port === 'out' ? undefined : port,
        },
        old,
      ),
    );
    onChange();
  };

  const problemsById = useMemo(() => {
    const map = new Map<string, string[]>();
    for (const p of props.problems)
      if (p.nodeId)
        map.set(p.nodeId, [
          ...(map.get(p.nodeId) ?? []),
          `${p.path.replace(/^\/nodes\/\d+\/?/, '')} ${p.message}`.trim(),
        ]);
    return map;
  }, [props.problems]);
  const shown = useMemo(
    () =>
      nodes.map((n) => ({
        ...n,
        data: {
          ...n.data,
          problems: problemsById.get(n.id) ?? [],
          runStatus: props.runStatus[n.id],
          badge: props.badges?.[n.id],
        },
      })),
    [nodes, problemsById, props.runStatus, props.badges],
  );

  return (
    <div className="pipeline-canvas-area">
      <Catalogue
        types={props.types}
        onAdd={(type) => add(type, flow.screenToFlowPosition({ x: 400, y: 300 }))}
      />
      {/* biome-ignore lint/a11y/noStaticElementInteractions: the drop target of the catalogue, whose buttons add nodes by keyboard too. */}
      <div
        className="pipeline-canvas"
        onDragOver={(e) => e.preventDefault()}
        onDrop={onDrop}
        data-testid="canvas"
        ref={box}
      >
        <ReactFlow
          nodes={shown}
          edges={edges}
          nodeTypes={nodeTypes}
          onNodesChange={(changes) => {
            onNodesChange(changes);
            if (
              changes.some((c) => c.type === 'position' && !c.dragging) ||
              changes.some((c) => c.type === 'remove')
            )
              onChange();
          }}
          onEdgesChange={(changes) => {
            onEdgesChange(changes);
            if (changes.some((c) => c.type === 'remove')) onChange();
          }}
          onConnect={onConnect}
          onSelectionChange={({ nodes: picked }) => props.onSelect(picked[0]?.id ?? null)}
          deleteKeyCode={['Delete']}
          minZoom={0.1}
        >
          <Background />
          <Controls />
        </ReactFlow>
      </div>
    </div>
  );
});
