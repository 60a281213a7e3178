import { useDeferredValue, useEffect, useState } from 'react';
import { Link, useNavigate } from 'react-router';
import { api, errorText, orgHeader, unwrap } from '../../api/client';
import { useAsync } from '../../app/use-async';
import { BadgeList } from '../../components/badges';
import { Dialog } from '../../components/dialog';
import { EmptyState, ErrorMessage, Loading } from '../../components/states';
import type { ObjectSchema, Protocol } from './connections-api';
import { type FormValues, initialValues, SchemaForm, toConfig } from './schema-form';
import './connections.css';
import { addressOf, useRuntimes } from './connection-address';
import { ConnectionTestButton } from './connection-test-button';
import { StateBadge } from './state-badge';

/** Connections of the organization with live state badges; create one from its protocol's form. */
export default function ConnectionsPage() {
  const [search, setSearch] = useState('');
  const [protocol, setProtocol] = useState('');
  const [creating, setCreating] = useState(false);
  const query = useDeferredValue(search.trim());
  const protocols = useAsync(
    async () =>
      unwrap(await api.GET('/api/v1/connections/protocols', { params: { header: orgHeader() } })).data,
    [],
  );
  const list = useAsync(async () => {
    const q = { limit: 200, ...(query ? { search: query } : {}), ...(protocol ? { protocol } : {}) };
    return unwrap(await api.GET('/api/v1/connections', { params: { header: orgHeader(), query: q } }));
  }, [query, protocol]);
  const runtimes = useRuntimes(3000);
  // Live state badges: the list is read again every 3 seconds.
  useEffect(() => {
    const timer = setInterval(() => list.reload(), 3000);
    return () => clearInterval(timer);
  }, [list.reload]);

  return (
    <section className="page" aria-labelledby="connections-title">
      <header className="page-header">
        <div>
          <h1 id="connections-title">Connections</h1>
          <p className="muted">Machines and systems Meridian reads from and writes to.</p>
        </div>
        <button type="button" className="button button-primary" onClick={() => setCreating(true)}>
          New connection
        </button>
      </header>
      <div className="toolbar">
        <label className="search">
          <span className="visually-hidden">Search connections</span>
          <input
            type="search"
            placeholder="Search name or description"
            value={search}
            onChange={(e) => setSearch(e.target.value)}
          />
        </label>
        <label>
          <span className="visually-hidden">Protocol</span>
          <select value={protocol} onChange={(e) => setProtocol(e.target.value)} aria-label="Protocol">
            <option value="">All protocols</option>
            {protocols.data?.map((p) => (
              <option key={p.id} value={p.id}>
                {p.name}
              </option>
            ))}
          </select>
        </label>
      </div>
      <ErrorMessage error={list.error} onRetry={list.reload} />
      {list.data === undefined ? (
        <Loading label="Loading connections…" />
      ) : list.data.data.length === 0 ? (
        <EmptyState title="No connections yet.">
          <p>Create one to bring machine values into the namespace.</p>
        </EmptyState>
      ) : (
        <div className="table-wrap">
          <table className="table responsive-table">
            <thead>
              <tr>
                <th>Name</th>
                <th>Protocol</th>
                <th>Address</th>
                <th>State</th>
                <th>Last error</th>
                <th>Requests/s</th>
                <th>Labels</th>
              </tr>
            </thead>
            <tbody>
              {list.data.data.map((c) => (
                <tr key={c.id}>
                  <td className="cell-name">
                    <Link to={`/connections/${c.id}`}>{c.name}</Link>
                    {c.readOnly && <small className="muted"> read-only</small>}
                  </td>
                  <td>{protocols.data?.find((p) => p.id === c.protocol)?.name ?? c.protocol}</td>
                  <td className="cell-address">
                    {addressOf(
                      c.config,
                      protocols.data?.find((p) => p.id === c.protocol),
                    )}
                  </td>
                  <td>
                    <StateBadge state={runtimes.get(c.id)?.state ?? c.state} />
                  </td>
                  <td className="cell-error">{runtimes.get(c.id)?.lastError ?? ''}</td>
                  <td data-rate={c.id}>{formatRate(runtimes.get(c.id)?.rate)}</td>
                  <td>
                    <BadgeList items={c.labels} shown={3} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {creating && protocols.data && (
        <CreateConnectionDialog protocols={protocols.data} onClose={() => setCreating(false)} />
      )}
    </section>
  );
}

/** Requests a second as the list shows it: one decimal below 10, a dash before two samples. */
function formatRate(rate: number | undefined): string {
  if (rate === undefined) return '–';
  return rate < 10 ? rate.toFixed(1) : String(Math.round(rate));
}

function CreateConnectionDialog({ protocols, onClose }: { protocols: Protocol[]; onClose: () => void }) {
  const navigate = useNavigate();
  const [protocolId, setProtocolId] = useState(protocols[0]?.id ?? '');
  const protocol = protocols.find((p) => p.id === protocolId);
  const schema = (protocol?.configSchema ?? {}) as ObjectSchema;
  const [name, setName] = useState('');
  const [description, setDescription] = useState('');
  const [readOnly, setReadOnly] = useState(false);
  const [values, setValues] = useState<FormValues>(() => initialValues(schema));
  const [error, setError] = useState<string | null>(null);
  const [saving, setSaving] = useState(false);

  const submit = async () => {
    setError(null);
    setSaving(true);
    try {
      const body = { name, description, protocol: protocolId, readOnly, config: toConfig(schema, values) };
      const created = unwrap(
        await api.POST('/api/v1/connections', { params: { header: orgHeader() }, body }),
      );
      navigate(`/connections/${created.data.id}`);
    } catch (failure) {
      setError(errorText(failure));
      setSaving(false);
    }
  };
  return (
    <Dialog title="New connection" onClose={onClose} wide>
      <form
        className="dialog-body"
        onSubmit={(event) => {
          event.preventDefault();
          void submit();
        }}
      >
        <label className="field">
          <span>Name *</span>
          <input
            name="name"
            value={name}
            onChange={(e) => setName(e.target.value)}
            maxLength={100}
            required
          />
        </label>
        <label className="field">
          <span>Description</span>
          <input
            name="description"
            value={description}
            onChange={(e) => setDescription(e.target.value)}
            maxLength={500}
          />
        </label>
        <label className="field">
          <span>Protocol</span>
          <select
            name="protocol"
            value={protocolId}
            onChange={(e) => {
              setProtocolId(e.target.value);
              setValues(
                initialValues(
                  (protocols.find((p) => p.id === e.target.value)?.configSchema ?? {}) as ObjectSchema,
                ),
              );
            }}
          >
            {protocols.map((p) => (
              <option key={p.id} value={p.id}>
                {p.name}
              </option>
            ))}
          </select>
        </label>
        <SchemaForm schema={schema} values={values} onChange={setValues} />
        <ConnectionTestButton protocol={protocolId} config={() => toConfig(schema, values)} />
        <label className="checkbox">
          <input type="checkbox" checked={readOnly} onChange={(e) => setReadOnly(e.target.checked)} />
          Read-only (refuse every write)
        </label>
        <ErrorMessage error={error} />
        <div className="dialog-actions">
          <button type="button" className="button" onClick={onClose}>
            Cancel
          </button>
          <button type="submit" className="button button-primary" disabled={saving}>
            Create
          </button>
        </div>
      </form>
    </Dialog>
  );
}
