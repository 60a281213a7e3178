import { useEffect, useState } from 'react';
import { errorText } from '../../api/client';
import { ErrorMessage, Loading } from '../../components/states';
import {
  VersionHistory as History,
  type VersionChange,
  type VersionItem,
} from '../../components/version-history';
import {
  diffVersions,
  type FieldShape,
  getVersion,
  listVersions,
  type Model,
  type ModelContent,
  type ModelField,
  revertModel,
} from './models-api';

/** "+2 field(s), ~1 field(s), -1 field(s)", as the version list shows a change. */
function summaryChips(version: VersionItem) {
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

/** Two versions side by side, their changed fields marked (the shared history lists the changes). */
function SideBySide({
  id,
  from,
  to,
  changes,
}: {
  id: string;
  from: number;
  to: number;
  changes: VersionChange[];
}) {
  const [state, setState] = useState<{ left: ModelContent; right: ModelContent } | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    setState(null);
    Promise.all([getVersion(id, from), getVersion(id, to)]).then(
      ([left, right]) => setState({ left: left.snapshot, right: right.snapshot }),
      (failure: unknown) => setError(errorText(failure)),
    );
  }, [id, from, to]);
  if (error) return <ErrorMessage error={error} />;
  if (!state) return <Loading label="Comparing versions…" />;
  // Fields are matched by name: a removed one is at its index in the older version, others in the newer.
  const changed = new Set(
    changes.flatMap((c) => {
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
    <div className="diff-panes">
      {pane(state.left, from)}
      {pane(state.right, to)}
    </div>
  );
}

/** A model's versions: the shared history with field chips, side-by-side fields and "Revert anyway". */
export function VersionHistory({ model, onReverted }: { model: Model; onReverted: (model: Model) => void }) {
  const source = {
    list: (offset: number, limit: number) => listVersions(model.id, offset, limit),
    diff: async (version: number, against: number) =>
      (await diffVersions(model.id, version, against)).changes as VersionChange[],
    revert: (version: number, acknowledge: boolean) => revertModel(model.id, version, acknowledge),
  };
  return (
    <History
      source={source}
      entityId={model.id}
      currentVersion={model.version}
      onReverted={onReverted}
      summary={summaryChips}
      panes={(from, to, changes) => <SideBySide id={model.id} from={from} to={to} changes={changes} />}
      acknowledgeConflicts
    />
  );
}
