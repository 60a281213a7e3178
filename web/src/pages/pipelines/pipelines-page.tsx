import { type FormEvent, useState } from 'react';
import { Link, useNavigate } from 'react-router';
import { errorText } from '../../api/client';
import { useAsync } from '../../app/use-async';
import { formatDateTime } from '../../components/format';
import { EmptyState, ErrorMessage, Loading } from '../../components/states';
import { createPipeline, listPipelines } from './pipelines-api';

/** The organization's pipelines: search, state, size; create one and open it in the editor. */
export function PipelinesPage() {
  const navigate = useNavigate();
  const [search, setSearch] = useState('');
  const [name, setName] = useState('');
  const [error, setError] = useState<string | null>(null);
  const list = useAsync(() => listPipelines(search), [search]);

  const create = async (event: FormEvent) => {
    event.preventDefault();
    setError(null);
    try {
      const created = await createPipeline(name.trim());
      navigate(`/engine/pipelines/${created.id}`);
    } catch (failure) {
      setError(errorText(failure));
    }
  };

  return (
    <section className="page">
      <header className="page-header">
        <h1>Pipelines</h1>
      </header>
      <form className="inline-form" onSubmit={create}>
        <label className="field">
          <span>New pipeline name</span>
          <input
            value={name}
            onChange={(e) => setName(e.target.value)}
            required
            minLength={3}
            maxLength={100}
          />
        </label>
        <button type="submit" className="button button-primary">
          Create pipeline
        </button>
      </form>
      <ErrorMessage error={error} />
      <label className="field">
        <span>Search pipelines</span>
        <input type="search" value={search} onChange={(e) => setSearch(e.target.value)} />
      </label>
      <ErrorMessage error={list.error} onRetry={list.reload} />
      {list.loading && !list.data && <Loading label="Loading pipelines…" />}
      {list.data && list.data.length === 0 && (
        <EmptyState title={search ? 'No pipelines match.' : 'No pipelines yet.'} />
      )}
      {list.data && list.data.length > 0 && (
        <div className="table-wrap">
          <table className="table responsive-table">
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">State</th>
                <th scope="col">Nodes</th>
                <th scope="col">Problems</th>
                <th scope="col">Version</th>
                <th scope="col">Updated</th>
              </tr>
            </thead>
            <tbody>
              {list.data.map((p) => (
                <tr key={p.id} data-pipeline-name={p.name}>
                  <td className="cell-name" data-label="Name">
                    <Link to={`/engine/pipelines/${p.id}`}>{p.name}</Link>
                    {p.description && <span className="description">{p.description}</span>}
                  </td>
                  <td data-label="State">{p.enabled ? 'Enabled' : 'Disabled'}</td>
                  <td data-label="Nodes">{p.nodeCount}</td>
                  <td data-label="Problems">{p.problems.length}</td>
                  <td data-label="Version">v{p.version}</td>
                  <td data-label="Updated">{formatDateTime(p.updatedAt)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}

export default PipelinesPage;
