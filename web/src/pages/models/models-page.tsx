import { useDeferredValue, useState } from 'react';
import { Link, useNavigate } from 'react-router';
import { errorText } from '../../api/client';
import { useAsync } from '../../app/use-async';
import { Dialog } from '../../components/dialog';
import { formatDateTime } from '../../components/format';
import { EmptyState, ErrorMessage, Loading } from '../../components/states';
import { createModel, listModels, type ModelListQuery } from './models-api';

const PAGE = 25;
const SORTS = [
  { value: 'name:asc', label: 'Name (A–Z)' },
  { value: 'name:desc', label: 'Name (Z–A)' },
  { value: 'updatedAt:desc', label: 'Recently updated' },
  { value: 'createdAt:desc', label: 'Newest first' },
];

function NewModelDialog({ onClose }: { onClose: () => void }) {
  const navigate = useNavigate();
  const [name, setName] = useState('');
  const [description, setDescription] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  return (
    <Dialog title="New model" onClose={onClose}>
      <form
        className="dialog-body"
        onSubmit={(event) => {
          event.preventDefault();
          setBusy(true);
          setError(null);
          createModel({ name: name.trim(), description: description.trim() || null, labels: [], fields: [] })
            .then((model) => navigate(`/engine/models/${model.id}`))
            .catch((failure: unknown) => {
              setError(errorText(failure));
              setBusy(false);
            });
        }}
      >
        <label className="field">
          <span>Name</span>
          <input value={name} onChange={(e) => setName(e.target.value)} maxLength={100} required />
        </label>
        <label className="field">
          <span>Description</span>
          <textarea value={description} onChange={(e) => setDescription(e.target.value)} maxLength={1000} />
        </label>
        <ErrorMessage error={error} />
        <div className="dialog-actions">
          <button type="button" className="button" onClick={onClose}>
            Cancel
          </button>
          <button type="submit" className="button button-primary" disabled={busy}>
            Create model
          </button>
        </div>
      </form>
    </Dialog>
  );
}

/** Data models: search, filter by label, sort, page; create. */
export function ModelsPage() {
  const [search, setSearch] = useState('');
  const [label, setLabel] = useState('');
  const [sort, setSort] = useState('name:asc');
  const [offset, setOffset] = useState(0);
  const [creating, setCreating] = useState(false);
  const query = useDeferredValue(search.trim());
  const labelQuery = useDeferredValue(label.trim());

  const list = useAsync(async () => {
    const [field, order] = sort.split(':') as [NonNullable<ModelListQuery['sort']>, 'asc' | 'desc'];
    return listModels({
      sort: field,
      order,
      limit: PAGE,
      offset,
      ...(query ? { search: query } : {}),
      ...(labelQuery ? { label: labelQuery } : {}),
    });
  }, [query, labelQuery, sort, offset]);

  const total = list.data?.pagination.total ?? 0;
  const filtered = query !== '' || labelQuery !== '';
  return (
    <section className="page" aria-labelledby="models-title">
      <header className="page-header">
        <div>
          <h1 id="models-title">Models</h1>
          <p className="muted">
            Typed data models: fields with units and limits, versions, and bindings to the namespace.
          </p>
        </div>
        <button type="button" className="button button-primary" onClick={() => setCreating(true)}>
          New model
        </button>
      </header>
      <div className="toolbar">
        <label className="search">
          <span className="visually-hidden">Search models</span>
          <input
            type="search"
            placeholder="Search name or description"
            value={search}
            onChange={(e) => {
              setSearch(e.target.value);
              setOffset(0);
            }}
          />
        </label>
        <label className="sort">
          <span>Label</span>
          <input
            value={label}
            onChange={(e) => {
              setLabel(e.target.value);
              setOffset(0);
            }}
            placeholder="any"
            size={10}
          />
        </label>
        <label className="sort">
          <span>Sort</span>
          <select value={sort} onChange={(e) => setSort(e.target.value)}>
            {SORTS.map((option) => (
              <option key={option.value} value={option.value}>
                {option.label}
              </option>
            ))}
          </select>
        </label>
      </div>
      <ErrorMessage error={list.error} onRetry={list.reload} />
      {list.loading && !list.data && <Loading label="Loading models…" />}
      {list.data && list.data.data.length === 0 && (
        <EmptyState title={filtered ? 'No models match this filter.' : 'No models yet.'}>
          {!filtered && <p>Create a model to describe the data of an asset, such as a pump or a motor.</p>}
        </EmptyState>
      )}
      {list.data && list.data.data.length > 0 && (
        <>
          <p className="muted" aria-live="polite">
            {total === 1 ? '1 model' : `${total} models`}
          </p>
          <div className="table-wrap">
            <table className="table responsive-table">
              <thead>
                <tr>
                  <th scope="col">Name</th>
                  <th scope="col">Labels</th>
                  <th scope="col">Fields</th>
                  <th scope="col">Version</th>
                  <th scope="col">Updated</th>
                </tr>
              </thead>
              <tbody>
                {list.data.data.map((model) => (
                  <tr key={model.id} data-model-name={model.name}>
                    <td className="cell-name" data-label="Name">
                      <Link to={`/engine/models/${model.id}`}>{model.name}</Link>
                      {model.description && <span className="description">{model.description}</span>}
                    </td>
                    <td data-label="Labels">
                      {model.labels.map((l) => (
                        <span key={l} className="badge">
                          {l}
                        </span>
                      ))}
                    </td>
                    <td data-label="Fields">{model.fieldCount}</td>
                    <td data-label="Version">v{model.version}</td>
                    <td data-label="Updated">{formatDateTime(model.updatedAt)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          {total > PAGE && (
            <nav className="pager" aria-label="Pages">
              <button
                type="button"
                className="button"
                disabled={offset === 0}
                onClick={() => setOffset(offset - PAGE)}
              >
                Previous
              </button>
              <span>
                {offset + 1}–{Math.min(offset + PAGE, total)} of {total}
              </span>
              <button
                type="button"
                className="button"
                disabled={offset + PAGE >= total}
                onClick={() => setOffset(offset + PAGE)}
              >
                Next
              </button>
            </nav>
          )}
        </>
      )}
      {creating && <NewModelDialog onClose={() => setCreating(false)} />}
    </section>
  );
}

export default ModelsPage;
