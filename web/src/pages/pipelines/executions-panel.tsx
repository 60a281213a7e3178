import { useEffect, useState } from 'react';
import { errorText } from '../../api/client';
import { formatDateTime } from '../../components/format';
import { ErrorMessage, Loading } from '../../components/states';
import {
  type Execution,
  getExecution,
  listExecutions,
  listNodeRuns,
  type NodeRun,
  type Pipeline,
  retryExecution,
} from './pipelines-api';

const FINISHED = (status: string) => !['queued', 'running'].includes(status);

/** One execution: its status and error, each node run with input, output, attempts and iterations; retry. */
function ExecutionInspector(props: {
  id: string;
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
        Execution <code>{execution.id.slice(0, 8)}</code> <span className="badge">{execution.status}</span>
      </h3>
      <p className="muted">
        Version {execution.pipelineVersion}, {execution.trigger.type} trigger, queued{' '}
        {formatDateTime(execution.queuedAt)}
        {execution.durationMs !== null ? `, ${execution.durationMs} ms` : ''}
        {execution.retryOf ? `, retry of ${execution.retryOf.slice(0, 8)}` : ''}
      </p>
      {execution.error && (
        <p className="field-error">
          {execution.error.nodeName ?? 'pipeline'}: {execution.error.code}: {execution.error.message}
        </p>
      )}
      <ErrorMessage error={error} />
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
            <span className="badge">{run.status}</span>
            {run.port && <span className="muted"> → {run.port}</span>}
            {run.durationMs !== null && <span className="muted"> {run.durationMs} ms</span>}
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
      <ErrorMessage error={error} />
      <button type="button" className="button button-small" onClick={() => setTick((t) => t + 1)}>
        Refresh
      </button>
      {executions === null ? (
        <Loading label="Loading executions…" />
      ) : (
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
                    {e.id.slice(0, 8)}
                  </button>
                </td>
                <td>{e.status}</td>
                <td>{e.trigger.type}</td>
                <td>{formatDateTime(e.queuedAt)}</td>
                <td>{e.durationMs === null ? '—' : `${e.durationMs} ms`}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {props.open && (
        <ExecutionInspector
          key={props.open}
          id={props.open}
          onOpen={props.onOpen}
          onFinished={() => setTick((t) => t + 1)}
          onRuns={props.onRuns}
        />
      )}
    </div>
  );
}
