import { useEffect, useState } from 'react';
import { errorText } from '../../api/client';
import { formatDateTime, formatNumber } from '../../components/format';
import { ErrorMessage, Loading } from '../../components/states';
import { ExecutionGraph } from './execution-graph';
import {
  type Execution,
  getExecution,
  listExecutions,
  listNodeRuns,
  type NodeRun,
  type NodeType,
  type Pipeline,
  type PipelineEdge,
  type PipelineNode,
  retryExecution,
} from './pipelines-api';

const FINISHED = (status: string) => !['queued', 'running'].includes(status);

/** An execution's or a node run's status in words and colour (data-status picks the colour). */
export function StatusBadge({ status }: { status: string }) {
  return (
    <span className="status-badge" data-status={status}>
      {status.replace(/_/g, ' ')}
    </span>
  );
}

/** The graph the inspector draws: the nodes where the editor has them, and the types for their titles. */
export interface GraphView {
  nodes: PipelineNode[];
  edges: PipelineEdge[];
  types: NodeType[];
}

/** One execution: its status and error, each node run with input, output, attempts and iterations; retry. */
function ExecutionInspector(props: {
  id: string;
  graph: GraphView | null;
  onOpen: (id: string) => void;
  onFinished: () => void;
  onRuns?: (runs: NodeRun[]) => void;
}) {
  const { id, onOpen, onFinished } = props;
  const [execution, setExecution] = useState<Execution | null>(null);
  const [runs, setRuns] = useState<NodeRun[]>([]);
  const [error, setError] = useState<string | null>(null);
  const [onCurrent, setOnCurrent] = useState(false);

  // biome-ignore lint/correctness/useExhaustiveDependencies: poll once per execution.
  useEffect(() => {
    let stop = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const poll = async () => {
      try {
        const e = await getExecution(id);
        const r = await listNodeRuns(id);
        if (stop) return;
        setExecution(e);
        setRuns(r);
        props.onRuns?.(r);
        if (!FINISHED(e.status)) timer = setTimeout(poll, 500);
        else onFinished();
      } catch (failure) {
        if (!stop) setError(errorText(failure));
      }
    };
    void poll();
    return () => {
      stop = true;
      clearTimeout(timer);
    };
  }, [id]);

  if (!execution) return error ? <ErrorMessage error={error} /> : <Loading label="Loading the execution…" />;
  const retry = (mode: 'from-failed' | 'from-start') =>
    retryExecution(id, mode, onCurrent ? 'current' : 'original').then(
      (e) => onOpen(e.id),
      (f: unknown) => setError(errorText(f)),
    );
  const retryable = ['failed', 'cancelled', 'completed_with_errors'].includes(execution.status);
  return (
    <section className="execution-inspector" aria-label="Execution" data-execution-status={execution.status}>
      <h3>
        Execution <code className="execution-id">{execution.id}</code>{' '}
        <StatusBadge status={execution.status} />
      </h3>
      <p className="muted">
        Version {execution.pipelineVersion}, {execution.trigger.type} trigger, queued{' '}
        {formatDateTime(execution.queuedAt)}
        {execution.durationMs !== null ? `, ${formatNumber(execution.durationMs)} ms` : ''}
        {execution.retryOf ? (
          <>
            , retry of{' '}
            <button type="button" className="button-link" onClick={() => onOpen(execution.retryOf!)}>
              <code>{execution.retryOf}</code>
            </button>
          </>
        ) : (
          ''
        )}
      </p>
      {execution.error && (
        <p className="field-error">
          {execution.error.nodeName ?? 'pipeline'}: {execution.error.code}: {execution.error.message}
        </p>
      )}
      <ErrorMessage error={error} />
      {props.graph && props.graph.nodes.length > 0 && (
        <ExecutionGraph
          nodes={props.graph.nodes}
          edges={props.graph.edges}
          types={props.graph.types}
          runs={runs}
          failedNodeId={execution.error?.nodeId ?? null}
        />
      )}
      {retryable && (
        <div className="toolbar">
          <label className="checkbox">
            <input type="checkbox" checked={onCurrent} onChange={(e) => setOnCurrent(e.target.checked)} />
            On the current version (not v{execution.pipelineVersion})
          </label>
          <button type="button" className="button" onClick={() => retry('from-failed')}>
            Retry from failed node
          </button>
          <button type="button" className="button" onClick={() => retry('from-start')}>
            Retry from start
          </button>
        </div>
      )}
      {runs.length === 0 && (
        <p className="muted">No node runs recorded (history detail minimal, or not started).</p>
      )}
      {runs.map((run) => (
        <details
          key={run.id}
          className="node-run"
          data-node-run={run.nodeName}
          data-status={run.status}
          open={run.status === 'failed'}
        >
          <summary>
            <strong>{run.nodeName}</strong> <span className="muted">{run.type}</span>
            {run.runIndex > 0 && <span className="badge">iteration {run.runIndex}</span>}{' '}
            <StatusBadge status={run.status} />
            {run.port && <span className="muted"> → {run.port}</span>}
            {run.durationMs !== null && <span className="muted"> {formatNumber(run.durationMs)} ms</span>}
            {run.attempts.length > 1 && <span className="muted"> {run.attempts.length} attempts</span>}
          </summary>
          {run.error && (
            <p className="field-error">
              {run.error.code}: {run.error.message}
            </p>
          )}
          <div className="node-run-io">
            <div>
              <h5>Input</h5>
              <pre data-testid="node-input">{JSON.stringify(run.input, null, 2) ?? '—'}</pre>
            </div>
            <div>
              <h5>Output</h5>
              <pre data-testid="node-output">{JSON.stringify(run.output, null, 2) ?? '—'}</pre>
            </div>
          </div>
          {run.attempts.some((a) => a.error) && (
            <ul>
              {run.attempts.map((a) => (
                <li key={a.n}>
                  Attempt {a.n}: {a.durationMs} ms {a.error ?? 'ok'}
                </li>
              ))}
            </ul>
          )}
        </details>
      ))}
    </section>
  );
}

/** The pipeline's executions, newest first, and the one opened in the inspector. */
export function ExecutionsPanel(props: {
  pipeline: Pipeline;
  open: string | null;
  onOpen: (id: string | null) => void;
  /** The node runs of the execution open in the inspector (the canvas shows their status). */
  onRuns?: (runs: NodeRun[]) => void;
  /** The graph as the editor lays it out, for the inspector's picture of the run. */
  graph: () => GraphView | null;
}) {
  const [executions, setExecutions] = useState<Execution[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [tick, setTick] = useState(0);
  // biome-ignore lint/correctness/useExhaustiveDependencies: reload on open and on demand.
  useEffect(() => {
    listExecutions(props.pipeline.id).then(setExecutions, (f: unknown) => setError(errorText(f)));
  }, [props.pipeline.id, props.open, tick]);
  return (
    <div className="executions">
      <div className="executions-list">
        <ErrorMessage error={error} />
        <button type="button" className="button button-small" onClick={() => setTick((t) => t + 1)}>
          Refresh
        </button>
        {executions === null ? (
          <Loading label="Loading executions…" />
        ) : executions.length === 0 ? (
          <p className="muted">No executions yet: Run now, or enable the pipeline for its triggers.</p>
        ) : (
          <div className="table-wrap">
            <table className="table">
              <thead>
                <tr>
                  <th scope="col">Execution</th>
                  <th scope="col">Status</th>
                  <th scope="col">Trigger</th>
                  <th scope="col">Queued</th>
                  <th scope="col">Duration</th>
                </tr>
              </thead>
              <tbody>
                {executions.map((e) => (
                  <tr key={e.id} data-execution-id={e.id} aria-selected={e.id === props.open}>
                    <td>
                      <button type="button" className="button-link" onClick={() => props.onOpen(e.id)}>
                        <code className="execution-id">{e.id}</code>
                      </button>
                    </td>
                    <td>
                      <StatusBadge status={e.status} />
                    </td>
                    <td>{e.trigger.type}</td>
                    <td>{formatDateTime(e.queuedAt)}</td>
                    <td>{e.durationMs === null ? '—' : `${formatNumber(e.durationMs)} ms`}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </div>
      {props.open ? (
        <ExecutionInspector
          key={props.open}
          id={props.open}
          graph={props.graph()}
          onOpen={props.onOpen}
          onFinished={() => setTick((t) => t + 1)}
          onRuns={props.onRuns}
        />
      ) : (
        <p className="muted execution-inspector-empty">Choose an execution to see how it ran.</p>
      )}
    </div>
  );
}
