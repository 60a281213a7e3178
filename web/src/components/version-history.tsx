import { type ReactNode, useEffect, useState } from 'react';
import { ApiFailure, errorText } from '../api/client';
import { formatDateTime } from './format';
import { ErrorMessage, Loading } from './states';

/** One entry of a version list, as every versioned entity's `GET .../versions` answers it. */
export interface VersionItem {
  version: number;
  changeType: string;
  revertedFrom: number | null;
  createdAt: string;
  summary: { added: string[]; removed: string[]; changed: string[] };
}

/** One difference between two versions, as the server computes it. */
export interface VersionChange {
  kind: 'added' | 'removed' | 'changed';
  path: string;
  from?: unknown;
  to?: unknown;
}

/** Where a history comes from: the entity's own version routes. */
export interface VersionSource<T> {
  list(offset: number, limit: number): Promise<{ data: VersionItem[]; pagination: { total: number } }>;
  diff(version: number, against: number): Promise<VersionChange[]>;
  /** Reverts to `version`; `acknowledge` repeats it after a 409 the entity lets one acknowledge. */
  revert(version: number, acknowledge: boolean): Promise<T>;
}

const PAGE = 25;

/** The default summary: the changed members' paths, at most four. */
function defaultSummary(version: VersionItem): string[] {
  const { added, removed, changed } = version.summary;
  const paths = [...added, ...removed, ...changed].map((p) => p.slice(1));
  if (paths.length === 0) return [];
  return [`${paths.slice(0, 4).join(', ')}${paths.length > 4 ? ` +${paths.length - 4}` : ''}`];
}

/** The server's list of changes between two versions, by JSON pointer. */
function ChangeList({ changes }: { changes: VersionChange[] }) {
  if (changes.length === 0) return <p className="muted">No differences.</p>;
  return (
    <ul className="diff-changes">
      {changes.map((change) => (
        <li key={`${change.kind} ${change.path}`} data-change-kind={change.kind}>
          <span className={`badge diff-${change.kind}`}>{change.kind}</span> <code>{change.path}</code>
          {change.kind !== 'added' && <span className="muted"> from {JSON.stringify(change.from)}</span>}
          {change.kind !== 'removed' && <span> to {JSON.stringify(change.to)}</span>}
        </li>
      ))}
    </ul>
  );
}

/** Two picked versions: the entity's own side-by-side view (if any), then the changes. */
function Comparison<T>(props: {
  source: VersionSource<T>;
  from: number;
  to: number;
  panes?: (from: number, to: number, changes: VersionChange[]) => ReactNode;
}) {
  const { source, from, to, panes } = props;
  const [changes, setChanges] = useState<VersionChange[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  // biome-ignore lint/correctness/useExhaustiveDependencies: the source is remade on every render.
  useEffect(() => {
    setChanges(null);
    setError(null);
    source.diff(to, from).then(setChanges, (failure: unknown) => setError(errorText(failure)));
  }, [from, to]);
  if (error) return <ErrorMessage error={error} />;
  if (!changes) return <Loading label="Comparing versions…" />;
  return (
    <section className="diff" aria-label={`Changes from v${from} to v${to}`}>
      {panes?.(from, to, changes)}
      <h4>
        Changes from v{from} to v{to}
      </h4>
      <ChangeList changes={changes} />
    </section>
  );
}

/**
 * The version history of any versioned entity (models, pipelines, connections, functions): versions
 * newest first, 25 at a time, each with its change and summary; pick two to compare them (the server's
 * diff, and the entity's own side-by-side view when it has one); revert to one (a new version).
 */
export function VersionHistory<T>(props: {
  source: VersionSource<T>;
  /** The entity's id and current version: the list reloads when either changes. */
  entityId: string;
  currentVersion: number;
  onReverted: (entity: T) => void;
  /** Chips summarizing a version (default: the changed paths). */
  summary?: (version: VersionItem) => string[];
  panes?: (from: number, to: number, changes: VersionChange[]) => ReactNode;
  /** Whether a 409 on revert can be acknowledged ("Revert anyway"), as a model's breaking change can. */
  acknowledgeConflicts?: boolean;
}) {
  const { source, entityId, currentVersion } = props;
  const summary = props.summary ?? defaultSummary;
  const [versions, setVersions] = useState<VersionItem[] | null>(null);
  const [total, setTotal] = useState(0);
  const [error, setError] = useState<string | null>(null);
  const [picked, setPicked] = useState<number[]>([]);
  const [conflict, setConflict] = useState<{ version: number; message: string } | null>(null);

  const load = (offset: number) =>
    source.list(offset, PAGE).then(
      (page) => {
        setVersions((old) => (offset === 0 || !old ? page.data : [...old, ...page.data]));
        setTotal(page.pagination.total);
      },
      (failure: unknown) => setError(errorText(failure)),
    );
  // biome-ignore lint/correctness/useExhaustiveDependencies: reload when the entity's version changes.
  useEffect(() => {
    load(0);
    setPicked([]);
  }, [entityId, currentVersion]);

  const toggle = (version: number) =>
    setPicked((old) =>
      old.includes(version) ? old.filter((v) => v !== version) : [...old.slice(-1), version],
    );
  const revert = (version: number, acknowledge: boolean) => {
    setError(null);
    setConflict(null);
    source.revert(version, acknowledge).then(props.onReverted, (failure: unknown) => {
      if (
        props.acknowledgeConflicts &&
        failure instanceof ApiFailure &&
        failure.status === 409 &&
        failure.code === 'conflict'
      )
        setConflict({ version, message: failure.message });
      else setError(errorText(failure));
    });
  };
  if (!versions) return error ? <ErrorMessage error={error} /> : <Loading label="Loading versions…" />;
  const [from, to] = [...picked].sort((a, b) => a - b);
  return (
    <div className="version-history">
      <ErrorMessage error={error} />
      {conflict && (
        <div className="warning" role="alert">
          <p>{conflict.message}</p>
          <button
            type="button"
            className="button button-danger"
            onClick={() => revert(conflict.version, true)}
          >
            Revert anyway
          </button>
        </div>
      )}
      <p className="muted">Pick two versions to compare them.</p>
      <table className="table">
        <thead>
          <tr>
            <th scope="col">Compare</th>
            <th scope="col">Version</th>
            <th scope="col">Change</th>
            <th scope="col">Summary</th>
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
              <td>
                {summary(v).map((chip) => (
                  <span key={chip} className="badge">
                    {chip}
                  </span>
                ))}
              </td>
              <td>{formatDateTime(v.createdAt)}</td>
              <td>
                {v.version !== currentVersion && (
                  <button
                    type="button"
                    className="button button-small"
                    onClick={() => revert(v.version, false)}
                  >
                    Revert to v{v.version}
                  </button>
                )}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      {versions.length < total && (
        <button type="button" className="button" onClick={() => load(versions.length)}>
          Load older versions
        </button>
      )}
      {from !== undefined && to !== undefined && (
        <Comparison source={source} from={from} to={to} panes={props.panes} />
      )}
    </div>
  );
}
