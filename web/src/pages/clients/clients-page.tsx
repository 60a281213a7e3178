import { useDeferredValue, useState } from 'react';
import { api, errorText, orgHeader, unwrap } from '../../api/client';
import type { ListClientsQuery, OAuth2Client } from '../../api/types';
import { useAsync } from '../../app/use-async';
import { formatNumber } from '../../components/format';
import { EmptyState, ErrorMessage, Loading } from '../../components/states';
import { useClientActions } from './client-actions';
import { ClientsTable } from './clients-table';
import { RegisterDialog } from './register-dialog';
import { useUsers } from './use-directory';

type Status = NonNullable<ListClientsQuery['status']>;
type Sort = NonNullable<ListClientsQuery['sort']>;
const PAGE = 50;

const SORTS: { value: string; label: string }[] = [
  { value: 'name:asc', label: 'Name (A–Z)' },
  { value: 'name:desc', label: 'Name (Z–A)' },
  { value: 'createdAt:desc', label: 'Newest first' },
  { value: 'createdAt:asc', label: 'Oldest first' },
  { value: 'updatedAt:desc', label: 'Recently updated' },
  { value: 'updatedAt:asc', label: 'Least recently updated' },
];

/** OAuth2 clients: filter by status, search, sort, page; register; act on each row. */
export function ClientsPage() {
  const [status, setStatus] = useState<Status>('all');
  const [search, setSearch] = useState('');
  const [sort, setSort] = useState('name:asc');
  const [offset, setOffset] = useState(0);
  const [registering, setRegistering] = useState(false);
  const [actionError, setActionError] = useState<string | null>(null);
  const query = useDeferredValue(search.trim());
  const { byId } = useUsers();

  const list = useAsync(async () => {
    const [field, order] = sort.split(':') as [Sort, 'asc' | 'desc'];
    const params = {
      header: orgHeader(),
      query: { status, sort: field, order, limit: PAGE, offset, ...(query ? { search: query } : {}) },
    };
    return unwrap(await api.GET('/api/v1/oauth2/clients', { params }));
  }, [status, query, sort, offset]);

  const actions = useClientActions(() => list.reload());
  const guard = (run: (client: OAuth2Client) => Promise<void> | void) => (client: OAuth2Client) => {
    setActionError(null);
    Promise.resolve(run(client)).catch((failure: unknown) => setActionError(errorText(failure)));
  };

  const total = list.data?.pagination.total ?? 0;
  const filtered = status !== 'all' || query !== '';
  return (
    <section className="page" aria-labelledby="clients-title">
      <header className="page-header">
        <div>
          <h1 id="clients-title">OAuth2 clients</h1>
          <p className="muted">
            Applications that obtain tokens from Meridian. Only System Administrators see this page.
          </p>
        </div>
        <button type="button" className="button button-primary" onClick={() => setRegistering(true)}>
          Register client
        </button>
      </header>
      <div className="toolbar">
        <fieldset className="segmented">
          <legend className="visually-hidden">Status</legend>
          {(['all', 'active', 'disabled'] as const).map((value) => (
            <button
              key={value}
              type="button"
              aria-pressed={status === value}
              onClick={() => {
                setStatus(value);
                setOffset(0);
              }}
            >
              {value === 'all' ? 'All' : value === 'active' ? 'Active' : 'Disabled'}
            </button>
          ))}
        </fieldset>
        <label className="search">
          <span className="visually-hidden">Search clients</span>
          <input
            type="search"
            placeholder="Search name, client ID or description"
            value={search}
            onChange={(event) => {
              setSearch(event.target.value);
              setOffset(0);
            }}
          />
        </label>
        <label className="sort">
          <span>Sort</span>
          <select value={sort} onChange={(event) => setSort(event.target.value)}>
            {SORTS.map((option) => (
              <option key={option.value} value={option.value}>
                {option.label}
              </option>
            ))}
          </select>
        </label>
      </div>
      <ErrorMessage error={actionError} />
      <ErrorMessage error={list.error} onRetry={list.reload} />
      {list.loading && !list.data && <Loading label="Loading clients…" />}
      {list.data && list.data.data.length === 0 && (
        <EmptyState title={filtered ? 'No clients match this filter.' : 'No OAuth2 clients yet.'}>
          {!filtered && <p>Register a client so an application can sign users in or call the API.</p>}
        </EmptyState>
      )}
      {list.data && list.data.data.length > 0 && (
        <>
          <p className="muted" aria-live="polite">
            {total === 1 ? '1 client' : `${formatNumber(total)} clients`}
            {list.loading ? ' · updating…' : ''}
          </p>
          <ClientsTable
            clients={list.data.data}
            users={byId}
            onEnable={guard(actions.enable)}
            onDisable={guard(actions.askDisable)}
            onDelete={guard(actions.askDelete)}
          />
          {total > PAGE && (
            <nav className="pager" aria-label="Pages">
              <button
                type="button"
                className="button"
                disabled={offset === 0}
                onClick={() => setOffset(Math.max(0, offset - PAGE))}
              >
                Previous
              </button>
              <span>
                {formatNumber(offset + 1)}–{formatNumber(Math.min(offset + PAGE, total))} of{' '}
                {formatNumber(total)}
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
      {actions.dialogs}
      {registering && <RegisterDialog onClose={() => setRegistering(false)} onRegistered={list.reload} />}
    </section>
  );
}
