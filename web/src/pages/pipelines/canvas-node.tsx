import { Handle, type Node, type NodeProps, Position, useUpdateNodeInternals } from '@xyflow/react';
import { useEffect } from 'react';
import { categoryIcon } from './categories';
import type { NodeType, PipelineNode } from './pipelines-api';

export type CanvasNodeData = {
  node: PipelineNode;
  type: NodeType | undefined;
  problems: string[];
  /** The status of this node in the execution being inspected. */
  runStatus?: string;
  /** Its output or error in that run, in short (the debug loop's badge). */
  badge?: string;
};

export type CanvasNode = Node<CanvasNodeData, 'pipeline'>;

/** A node's output ports: those its parameters make (`dynamicOutputs`), then its type's (with `error`). */
export function outputPorts(type: NodeType | undefined, parameters: Record<string, unknown>): string[] {
  if (!type) return ['out'];
  const dynamic = type.dynamicOutputs;
  const items = dynamic ? parameters[dynamic.parameter] : undefined;
  const made =
    dynamic && Array.isArray(items) ? items.map((_, i) => dynamic.port.replace('{index}', String(i))) : [];
  return [...made, ...type.outputs];
}

/** Spreads `count` handles down a side: the i-th at this top percentage. */
const at = (i: number, count: number) => `${((i + 1) * 100) / (count + 1)}%`;

/** A node on the canvas: its name and type, a port per input and output, and its validation problems. */
export function CanvasNodeView({ id, data, selected }: NodeProps<CanvasNode>) {
  const inputs = data.type?.inputs ?? ['in'];
  const outputs = outputPorts(data.type, data.node.parameters);
  const updateNodeInternals = useUpdateNodeInternals();
  const portsKey = outputs.join(',');
  // Ports made by parameters (a switch's rules) come and go: xyflow measures the handles again.
  // biome-ignore lint/correctness/useExhaustiveDependencies: portsKey stands for the ports.
  useEffect(() => updateNodeInternals(id), [id, portsKey, updateNodeInternals]);
  const invalid = data.problems.length > 0;
  return (
    <div
      className={`canvas-node${selected ? ' canvas-node-selected' : ''}${invalid ? ' canvas-node-invalid' : ''}${data.node.disabled ? ' canvas-node-disabled' : ''}`}
      data-node-id={data.node.id}
      data-node-name={data.node.name}
      data-run-status={data.runStatus}
      data-category={data.type?.category}
    >
      {inputs.map((port, i) => (
        <Handle
          key={port}
          type="target"
          id={port}
          position={Position.Left}
          style={{ top: at(i, inputs.length) }}
        />
      ))}
      <div className="canvas-node-title">
        <span className="canvas-node-icon" aria-hidden="true">
          {categoryIcon(data.type?.category)}
        </span>{' '}
        {data.node.name}
      </div>
      <div className="canvas-node-type">
        {data.type && data.type.title !== data.node.name ? data.type.title : data.node.type}
      </div>
      {invalid && (
        <div className="canvas-node-problems" role="note" aria-label={`Problems of ${data.node.name}`}>
          {data.problems.map((message) => (
            <div key={message}>⚠ {message}</div>
          ))}
        </div>
      )}
      {data.badge !== undefined && (
        <div className="canvas-node-badge" data-testid="node-badge" title={data.badge}>
          {data.badge}
        </div>
      )}
      {outputs.map((port, i) => (
        <Handle
          key={port}
          type="source"
          id={port}
          position={Position.Right}
          style={{ top: at(i, outputs.length) }}
          title={port}
          className={port === 'error' ? 'handle-error' : undefined}
        />
      ))}
      {outputs.length > 1 && (
        <div className="canvas-node-ports" aria-hidden="true">
          {outputs.map((port) => (
            <span key={port}>{port}</span>
          ))}
        </div>
      )}
    </div>
  );
}
