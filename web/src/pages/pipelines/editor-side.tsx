import type { ReactNode } from 'react';
import type { DebugLoop } from './debug-loop';
import { DebugPanel } from './debug-panel';
import type { Pipeline } from './pipelines-api';

export type SideTab = 'node' | 'debug';

/** The column beside the canvas: the selected node's panel, or the debug panel (Node-RED's sidebar). */
export function EditorSide(props: {
  tab: SideTab;
  onTab: (tab: SideTab) => void;
  pipeline: Pipeline;
  loop: DebugLoop;
  /** The selected node's panel; null when no node is selected. */
  nodePanel: ReactNode;
}) {
  const { loop, pipeline } = props;
  return (
    <div className="pipeline-side">
      <div className="tabs" role="tablist" aria-label="Side panel">
        {(['node', 'debug'] as const).map((t) => (
          <button
            key={t}
            type="button"
            role="tab"
            aria-selected={props.tab === t}
            className="tab"
            onClick={() => props.onTab(t)}
          >
            {t === 'node' ? 'Node' : 'Debug'}
          </button>
        ))}
      </div>
      {props.tab === 'debug' ? (
        <DebugPanel
          nodes={pipeline.nodes}
          runs={loop.runs}
          shown={loop.shown}
          onShow={loop.show}
          onPin={loop.pin}
          onClear={loop.clear}
        />
      ) : (
        (props.nodePanel ?? (
          <p className="muted">Select a node to edit it; “Run now” shows each node’s output under Debug.</p>
        ))
      )}
    </div>
  );
}
