import type { GraphProblem, Pipeline } from './pipelines-api';

/** How much of each run is kept: the pipeline setting `historyDetail`. */
export function HistoryDetailSelect(props: { pipeline: Pipeline; onChange: (pipeline: Pipeline) => void }) {
  const { pipeline } = props;
  return (
    <label className="field">
      <span>History detail</span>
      <select
        value={String((pipeline.settings as { historyDetail?: string } | null)?.historyDetail ?? 'standard')}
        onChange={(e) =>
          props.onChange({
            ...pipeline,
            settings: { ...(pipeline.settings as object), historyDetail: e.target.value },
          })
        }
      >
        <option value="minimal">Minimal (failed nodes only)</option>
        <option value="standard">Standard (status and timing)</option>
        <option value="full">Full (inputs and outputs)</option>
      </select>
    </label>
  );
}

/** Someone else saved while this one edited: reload (the edits are dropped). */
export function ConflictWarning(props: { version: number; onReload: () => void }) {
  return (
    <div className="warning" role="alert">
      <p>
        Someone saved version {props.version} while you edited. Reload it to continue (your changes are
        discarded).
      </p>
      <button type="button" className="button" onClick={props.onReload}>
        Reload version {props.version}
      </button>
    </div>
  );
}

/** The graph's problems, each with its node's name and the path in the graph. */
export function ProblemList(props: { problems: GraphProblem[]; pipeline: Pipeline }) {
  const name = (id: string | null) =>
    id === null ? 'pipeline' : (props.pipeline.nodes.find((n) => n.id === id)?.name ?? id);
  return (
    <details className="problems">
      <summary>{props.problems.length} problem(s) keep this pipeline from being enabled</summary>
      <ul>
        {props.problems.map((p) => (
          <li key={`${p.nodeId} ${p.path} ${p.message}`}>
            {name(p.nodeId)} <code>{p.path}</code> {p.message}
          </li>
        ))}
      </ul>
    </details>
  );
}
