import { useEffect, useState } from 'react';
import { errorText } from '../../api/client';
import { formatDateTime } from '../../components/format';
import { ErrorMessage, Loading } from '../../components/states';
import {
  type Change,
  diffVersions,
  listVersions,
  type Pipeline,
  type PipelineVersion,
  revertTo,
} from './pipelines-api';

/** The versions of a pipeline, newest first: compare two (the server's diff), revert to one. */
export function PipelineHistory({
  pipeline,
  onReverted,
}: {
  pipeline: Pipeline;
  onReverted: (p: Pipeline) => void;
}) {
  const [versions, setVersions] = useState<PipelineVersion[] | null>(null);
  const [picked, setPicked] = useState<number[]>([]);
  const [changes, setChanges] = useState<Change[] | null>(null);
  const [error, setError] = useState<string | null>(null);

  // biome-ignore lint/correctness/useExhaustiveDependencies: a new version reloads the list.
  useEffect(() => {
    listVersions(pipeline.id).then(setVersions, (f: unknown) => setError(errorText(f)));
  }, [pipeline.id, pipeline.version]);

  const [from, to] = [...picked].sort((a, b) => a - b);
  useEffect(() => {
    setChanges(null);
    if (from === undefined || to === undefined) return;
    diffVersions(pipeline.id, to, from).then(setChanges, (f: unknown) => setError(errorText(f)));
  }, [pipeline.id, from, to]);

  if (!versions) return error ? <ErrorMessage error={error} /> : <Loading label="Loading versions…" />;
  const toggle = (v: number) =>
    setPicked((old) => (old.includes(v) ? old.filter((x) => x !== v) : [...old.slice(-1), v]));
  return (
    <div className="pipeline-history">
      <ErrorMessage error={error} />
      <p className="muted">Pick two versions to compare them.</p>
      <table className="table">
        <thead>
          <tr>
            <th scope="col">Compare</th>
            <th scope="col">Version</th>
            <th scope="col">Change</th>
            <th scope="col">When</th>
            <th scope="col">
              <span className="visually-hidden">Actions</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {versions.map((v) => (
            <tr key={v.version} data-version={v.version}>
              <td>
                <input
                  type="checkbox"
                  aria-label={`Compare version ${v.version}`}
                  checked={picked.includes(v.version)}
                  onChange={() => toggle(v.version)}
                />
              </td>
              <td>v{v.version}</td>
              <td>
                {v.changeType}
                {v.revertedFrom ? ` (to v${v.revertedFrom})` : ''}
              </td>
              <td>{formatDateTime(v.createdAt)}</td>
              <td>
                {v.version !== pipeline.version && (
                  <button
                    type="button"
                    className="button button-small"
                    onClick={() =>
                      revertTo(pipeline.id, v.version).then(onReverted, (f: unknown) =>
                        setError(errorText(f)),
                      )
                    }
                  >
                    Revert to v{v.version}
                  </button>
                )}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      {changes && (
        <section aria-label={`Changes from v${from} to v${to}`}>
          <h4>
            Changes from v{from} to v{to}
          </h4>
          {changes.length === 0 ? (
            <p className="muted">No differences.</p>
          ) : (
            <ul className="diff-changes">
              {changes.map((c) => (
                <li key={`${c.kind} ${c.path}`} data-change-kind={c.kind}>
                  <span className="badge">{c.kind}</span> <code>{c.path}</code>
                  {c.kind !== 'added' && <span className="muted"> from {JSON.stringify(c.from)}</span>}
                  {c.kind !== 'removed' && <span> to {JSON.stringify(c.to)}</span>}
                </li>
              ))}
            </ul>
          )}
        </section>
      )}
    </div>
  );
}
