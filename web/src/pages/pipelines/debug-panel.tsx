import { formatDateTime, formatNumber } from '../../components/format';
import type { DebugNode, DebugRun } from './debug-runs';
import { StatusBadge } from './executions-panel';
import type { PipelineNode } from './pipelines-api';

/** A short line for a node's badge on the canvas: its error, its output, or that it did not run. */
export function badgeText(node: DebugNode | undefined): string {
  if (!node) return 'did not run';
  if (node.error) return node.error.message;
  if (node.status !== 'succeeded') return node.status;
  if (node.output === null || node.output === undefined) return 'ok';
  const text = JSON.stringify(node.output);
  return text.length > 48 ? `${text.slice(0, 47)}…` : text;
}

function NodeResult({ node, result }: { node: PipelineNode; result: DebugNode | undefined }) {
  return (
    <li className="debug-node" data-debug-node={node.name} data-status={result?.status ?? 'not-run'}>
      <div className="debug-node-head">
        <strong>{node.name}</strong>{' '}
        {result ? <StatusBadge status={result.status} /> : <span className="muted">did not run</span>}
        {result?.durationMs !== null && result?.durationMs !== undefined && (
          <span className="muted"> {formatNumber(result.durationMs)} ms</span>
        )}
        {result?.port && result.port !== 'out' && <span className="muted"> → {result.port}</span>}
      </div>
      {result?.error && (
        <p className="field-error">
          {result.error.code}: {result.error.message}
        </p>
      )}
      {result && result.output !== null && result.output !== undefined && (
        <pre data-testid="debug-output">{JSON.stringify(result.output, null, 2)}</pre>
      )}
    </li>
  );
}

/**
 * The debug sidebar: the shown run (live while it runs) node by node in graph order, with outputs and
 * errors, nodes that did not run marked; below, the last runs kept in this browser, pinned or cleared.
 */
export function DebugPanel(props: {
  nodes: PipelineNode[];
  runs: DebugRun[];
  shown: DebugRun | null;
  onShow: (executionId: string) => void;
  onPin: (executionId: string, pinned: boolean) => void;
  onClear: () => void;
}) {
  const { shown } = props;
  const byNode = new Map(shown?.nodes.map((n) => [n.nodeId, n]) ?? []);
  return (
    <section className="debug-panel" aria-label="Debug">
      {shown ? (
        <div data-testid="debug-run" data-execution-status={shown.status}>
          <h4>
            Run <code>{shown.executionId.slice(0, 8)}</code> <StatusBadge status={shown.status} />
          </h4>
          <p className="muted">Queued {formatDateTime(shown.queuedAt)}</p>
          {shown.error && <p className="field-error">{shown.error}</p>}
          <ol className="debug-nodes">
            {props.nodes.map((node) => (
              <NodeResult key={node.id} node={node} result={byNode.get(node.id)} />
            ))}
          </ol>
        </div>
      ) : (
        <p className="muted">Press “Run now”: each node’s output or error shows here and on the canvas.</p>
      )}
      <div className="debug-history">
        <h4>Last runs</h4>
        {props.runs.length === 0 ? (
          <p className="muted">No runs kept in this browser yet.</p>
        ) : (
          <>
            <ul aria-label="Last runs">
              {props.runs.map((run) => (
                <li
                  key={run.executionId}
                  data-debug-run={run.executionId}
                  data-pinned={run.pinned ? 'true' : 'false'}
                >
                  <button
                    type="button"
                    className="button-link"
                    aria-current={run.executionId === shown?.executionId ? 'true' : undefined}
                    onClick={() => props.onShow(run.executionId)}
                  >
                    {formatDateTime(run.queuedAt)}
                  </button>{' '}
                  <StatusBadge status={run.status} />{' '}
                  <button
                    type="button"
                    className="button-link"
                    aria-pressed={run.pinned}
                    aria-label={`${run.pinned ? 'Unpin' : 'Pin'} run ${run.executionId}`}
                    onClick={() => props.onPin(run.executionId, !run.pinned)}
                  >
                    {run.pinned ? '★ pinned' : '☆ pin'}
                  </button>
                </li>
              ))}
            </ul>
            <button type="button" className="button" onClick={props.onClear}>
              Clear unpinned runs
            </button>
          </>
        )}
      </div>
    </section>
  );
}
