import { Handle, type Node, type NodeProps, Position } from '@xyflow/react';
import type { NodeType, PipelineNode } from './pipelines-api';

export type CanvasNodeData = {
  node: PipelineNode;
  type: NodeType | undefined;
  problems: string[];
  /** The status of this node in the execution being inspected. */
  runStatus?: string;
};

export type CanvasNode = Node<CanvasNodeData, 'pipeline'>;

/** Spreads `count` handles down a side: the i-th at this top percentage. */
const at = (i: number, count: number) => `${((i + 1) * 100) / (count + 1)}%`;

/** A node on the canvas: its name and type, a port per input and output, and its validation problems. */
export function CanvasNodeView({ data, selected }: NodeProps<CanvasNode>) {
  const inputs = data.type?.inputs ?? ['in'];
  const outputs = data.type?.outputs ?? ['out'];
  const invalid = data.problems.length > 0;
  return (
    <div
      className={`canvas-node${selected ? ' canvas-node-selected' : ''}${invalid ? ' canvas-node-invalid' : ''}${data.node.disabled ? ' canvas-node-disabled' : ''}`}
      data-node-id={data.node.id}
      data-node-name={data.node.name}
      data-run-status={data.runStatus}
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
      <div className="canvas-node-title">{data.node.name}</div>
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
