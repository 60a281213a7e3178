import { useEffect, useState } from 'react';
import { ApiFailure, errorText } from '../../api/client';
import { formatDateTime } from '../../components/format';
import { ErrorMessage, Loading } from '../../components/states';
import {
  diffVersions,
  type FieldShape,
  getVersion,
  listVersions,
  type Model,
  type ModelContent,
  type ModelField,
  type ModelVersion,
  revertModel,
  type VersionDiff,
} from './models-api';

const PAGE = 25;

/** "+2 field(s), ~1 field(s), -1 field(s)", as the version list shows a change. */
function summaryChips(version: ModelVersion) {
  const { added, removed, changed } = version.summary;
  const fields = (list: string[]) => list.filter((p) => p.startsWith('/fields/')).length;
  const other = changed.filter((p) => !p.startsWith('/fields/')).map((p) => p.slice(1));
  const chips: string[] = [];
  if (fields(added)) chips.push(`+${fields(added)} field(s)`);
  if (fields(changed)) chips.push(`~${fields(changed)} field(s)`);
  if (fields(removed)) chips.push(`-${fields(removed)} field(s)`);
  if (other.length) chips.push(`${other.join(', ')} changed`);
  return chips;
}

/** A version's fields as a nested list: type, unit, required, constraints, items and references. */
function FieldLines({ fields, changed }: { fields: ModelField[]; changed?: Set<string> }) {
  const describe = (shape: FieldShape): string =>
    [
      shape.type === 'array' && shape.items ? `list of ${describe(shape.items)}` : shape.type,
      shape.enum ? ` (${shape.enum.join(', ')})` : '',
      shape.model
        ? ` → ${shape.model.id.slice(0, 8)}${shape.model.version ? ` v${shape.model.version}` : ''}`
        : '',
      shape.constraints ? ` ${JSON.stringify(shape.constraints)}` : '',
    ].join('');
  return (
    <ul className="diff-fields">
      {fields.map((field) => (
        <li key={field.name} className={changed?.has(field.name) ? 'diff-changed' : undefined}>
          <code>{field.name}</code>: {describe(field)}
          {field.unit ? ` [${field.unit}]` : ''}
          {field.required ? ' required' : ''}
          {field.fields && <FieldLines fields={field.fields} />}
        </li>
      ))}
    </ul>
  );
}

/** Two versions side by side, with the server's list of changes by JSON pointer. */
function SideBySide({ id, from, to }: { id: string; from: number; to: number }) {
  const [state, setState] = useState<{ left: ModelContent; right: ModelContent; diff: VersionDiff } | null>(
    null,
  );
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    setState(null);
    Promise.all([getVersion(id, from), getVersion(id, to), diffVersions(id, to, from)]).then(
      ([left, right, diff]) => setState({ left: left.snapshot, right: right.snapshot, diff }),
      (failure: unknown) => setError(errorText(failure)),
    );
  }, [id, from, to]);
  if (error) return <ErrorMessage error={error} />;
  if (!state) return <Loading label="Comparing versions…" />;
  // Fields are matched by name: a removed one is at its index in the older version, others in the newer.
  const changed = new Set(
    state.diff.changes.flatMap((c) => {
      const [, top, index] = c.path.split('/');
      if (top !== 'fields' || index === undefined) return [];
      const side = c.kind === 'removed' ? state.left : state.right;
      return [side.fields[Number(index)]?.name ?? ''];
    }),
  );
  const pane = (content: ModelContent, version: number) => (
    <section className="diff-pane" aria-label={`Version ${version}`}>
      <h4>Version {version}</h4>
      <p>
        <strong>{content.name}</strong>{' '}
        {content.description && <span className="muted">— {content.description}</span>}
      </p>
      <FieldLines fields={content.fields} changed={changed} />
    </section>
  );
  return (
    <div className="diff">
      <div className="diff-panes">
        {pane(state.left, from)}
        {pane(state.right, to)}
      </div>
      <h4>Changes</h4>
      {state.diff.changes.length === 0 ? (
        <p className="muted">No differences.</p>
      ) : (
        <ul className="diff-changes">
          {state.diff.changes.map((change) => (
            <li key={`${change.kind} ${change.path}`} data-change-kind={change.kind}>
              <span className={`badge diff-${change.kind}`}>{change.kind}</span> <code>{change.path}</code>
              {change.kind !== 'added' && <span className="muted"> from {JSON.stringify(change.from)}</span>}
              {change.kind !== 'removed' && <span> to {JSON.stringify(change.to)}</span>}
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}

/** Versions newest first, 25 at a time; compare any two; revert to one (a new version). */
export function VersionHistory({ model, onReverted }: { model: Model; onReverted: (model: Model) => void }) {
  const [versions, setVersions] = useState<ModelVersion[]>([]);
  const [total, setTotal] = useState(0);
  const [error, setError] = useState<string | null>(null);
  const [picked, setPicked] = useState<number[]>([]);
  const [breaking, setBreaking] = useState<{ version: number; message: string } | null>(null);

  const load = (offset: number) =>
    listVersions(model.id, offset, PAGE).then(
      (page) => {
        setVersions((old) => (offset === 0 ? page.data : [...old, ...page.data]));
        setTotal(page.pagination.total);
      },
      (failure: unknown) => setError(errorText(failure)),
    );
  // biome-ignore lint/correctness/useExhaustiveDependencies: reload when the model's version changes.
  useEffect(() => {
    load(0);
    setPicked([]);
  }, [model.id, model.version]);

  const toggle = (version: number) =>
    setPicked((old) =>
      old.includes(version) ? old.filter((v) => v !== version) : [...old.slice(-1), version],
    );
  const revert = (version: number, acknowledge: boolean) => {
    setError(null);
    setBreaking(null);
    revertModel(model.id, version, acknowledge).then(onReverted, (failure: unknown) => {
      if (failure instanceof ApiFailure && failure.status === 409 && failure.code === 'conflict')
        setBreaking({ version, message: failure.message });
      else setError(errorText(failure));
    });
  };
  const [from, to] = [...picked].sort((a, b) => a - b);
  return (
    <div className="version-history">
      <ErrorMessage error={error} />
      {breaking && (
        <div className="warning" role="alert">
          <p>{breaking.message}</p>
          <button
            type="button"
            className="button button-danger"
            onClick={() => revert(breaking.version, true)}
          >
            Revert anyway
          </button>
        </div>
      )}
      <p className="muted">Pick two versions to compare them side by side.</p>
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
                {summaryChips(v).map((chip) => (
                  <span key={chip} className="badge">
                    {chip}
                  </span>
                ))}
              </td>
              <td>{formatDateTime(v.createdAt)}</td>
              <td>
                {v.version !== model.version && (
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
      {from !== undefined && to !== undefined && <SideBySide id={model.id} from={from} to={to} />}
    </div>
  );
}
