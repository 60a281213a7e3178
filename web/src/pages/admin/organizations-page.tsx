import { type FormEvent, useState } from 'react';
import { api, errorText, orgHeader, unwrap } from '../../api/client';
import { useAsync } from '../../app/use-async';
import { ActionsMenu } from '../../components/actions-menu';
import { StatusBadge } from '../../components/badges';
import { ConfirmDialog } from '../../components/confirm-dialog';
import { Dialog } from '../../components/dialog';
import { formatDateTime } from '../../components/format';
import { EmptyState, ErrorMessage, Loading } from '../../components/states';
import type { Organization } from './admin-api';
import { Pager } from './change-list';
import './admin.css';

const PAGE = 50;

/** A name dialog for creating or renaming an organization. */
function NameDialog(props: {
  title: string;
  initial: string;
  submitLabel: string;
  onSubmit: (name: string) => Promise<void>;
  onClose: () => void;
}) {
  const [name, setName] = useState(props.initial);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      await props.onSubmit(name);
    } catch (failure) {
      setError(errorText(failure));
      setBusy(false);
    }
  };
  return (
    <Dialog title={props.title} onClose={props.onClose}>
      <form onSubmit={submit} noValidate>
        <div className="dialog-body">
          <label className="field">
            <span>Name</span>
            <input value={name} maxLength={100} onChange={(event) => setName(event.target.value)} />
          </label>
          <ErrorMessage error={error} />
        </div>
        <footer className="dialog-actions">
          <button type="button" className="button" onClick={props.onClose} disabled={busy}>
            Cancel
          </button>
          <button type="submit" className="button button-primary" disabled={busy}>
            {props.submitLabel}
          </button>
        </footer>
      </form>
    </Dialog>
  );
}

type Pending =
  | { kind: 'create' }
  | { kind: 'rename'; org: Organization }
  | { kind: 'suspend'; org: Organization }
  | { kind: 'delete'; org: Organization };

/** Every organization, for System Administrators: create, rename, suspend, activate, delete. */
export function OrganizationsPage() {
  const [search, setSearch] = useState('');
  const [offset, setOffset] = useState(0);
  const [pending, setPending] = useState<Pending | null>(null);
  const [error, setError] = useState<string | null>(null);
  const list = useAsync(
    async () =>
      unwrap(
        await api.GET('/api/v1/organizations', {
          params: {
            header: orgHeader(),
            query: {
              status: 'all',
              limit: PAGE,
              offset,
              ...(search.trim() ? { search: search.trim() } : {}),
            },
          },
        }),
      ),
    [search, offset],
  );
  const done = () => {
    setPending(null);
    list.reload();
  };
  const activate = (org: Organization) => {
    setError(null);
    api
      .POST('/api/v1/organizations/{id}/activate', { params: { header: orgHeader(), path: { id: org.id } } })
      .then(unwrap)
      .then(list.reload, (failure: unknown) => setError(errorText(failure)));
  };

  return (
    <section className="page" aria-labelledby="orgs-title">
      <header className="page-header">
        <div>
          <h1 id="orgs-title">Organizations</h1>
          <p className="muted">
            Every organization on this instance. Only System Administrators see this page.
          </p>
        </div>
        <button
          type="button"
          className="button button-primary"
          onClick={() => setPending({ kind: 'create' })}
        >
          Create organization
        </button>
      </header>
      <div className="toolbar">
        <label className="search">
          <span className="visually-hidden">Search organizations</span>
          <input
            type="search"
            placeholder="Search by name"
            value={search}
            onChange={(event) => {
              setSearch(event.target.value);
              setOffset(0);
            }}
          />
        </label>
      </div>
      <ErrorMessage error={error} />
      <ErrorMessage error={list.error} onRetry={list.reload} />
      {list.loading && !list.data && <Loading label="Loading organizations…" />}
      {list.data && list.data.data.length === 0 && <EmptyState title="No organizations match." />}
      {list.data && list.data.data.length > 0 && (
        <div className="table-wrap">
          <table className="table responsive-table">
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Status</th>
                <th scope="col">Your role</th>
                <th scope="col">Created</th>
                <th scope="col">
                  <span className="visually-hidden">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {list.data.data.map((org) => (
                <tr key={org.id} data-org={org.name}>
                  <td data-label="Name" className="cell-name">
                    {org.name}
                  </td>
                  <td data-label="Status">
                    <StatusBadge status={org.status} />
                  </td>
                  <td data-label="Your role">{org.role ?? <span className="muted">—</span>}</td>
                  <td data-label="Created">{formatDateTime(org.createdAt)}</td>
                  <td className="cell-actions">
                    <ActionsMenu
                      label={`Actions for ${org.name}`}
                      actions={[
                        { label: 'Rename…', onSelect: () => setPending({ kind: 'rename', org }) },
                        org.status === 'active'
                          ? { label: 'Suspend…', onSelect: () => setPending({ kind: 'suspend', org }) }
                          : { label: 'Activate', onSelect: () => activate(org) },
                        ...(org.status === 'suspended'
                          ? [
                              {
                                label: 'Delete…',
                                danger: true,
                                onSelect: () => setPending({ kind: 'delete', org }),
                              },
                            ]
                          : []),
                      ]}
                    />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {list.data && (
        <Pager offset={offset} limit={PAGE} total={list.data.pagination.total} onOffset={setOffset} />
      )}
      {pending?.kind === 'create' && (
        <NameDialog
          title="Create an organization"
          initial=""
          submitLabel="Create"
          onClose={() => setPending(null)}
          onSubmit={async (name) => {
            unwrap(
              await api.POST('/api/v1/organizations', { params: { header: orgHeader() }, body: { name } }),
            );
            done();
          }}
        />
      )}
      {pending?.kind === 'rename' && (
        <NameDialog
          title={`Rename ${pending.org.name}`}
          initial={pending.org.name}
          submitLabel="Rename"
          onClose={() => setPending(null)}
          onSubmit={async (name) => {
            unwrap(
              await api.PATCH('/api/v1/organizations/{id}', {
                params: { header: orgHeader(), path: { id: pending.org.id } },
                body: { name },
              }),
            );
            done();
          }}
        />
      )}
      {pending?.kind === 'suspend' && (
        <ConfirmDialog
          title={`Suspend ${pending.org.name}?`}
          confirmLabel="Suspend"
          danger
          onClose={() => setPending(null)}
          onConfirm={async () => {
            unwrap(
              await api.POST('/api/v1/organizations/{id}/suspend', {
                params: { header: orgHeader(), path: { id: pending.org.id } },
              }),
            );
            done();
          }}
        >
          <p>Its members' requests are refused until it is activated again. Its data is kept.</p>
        </ConfirmDialog>
      )}
      {pending?.kind === 'delete' && (
        <ConfirmDialog
          title={`Delete ${pending.org.name}?`}
          confirmLabel="Delete for good"
          danger
          acknowledgement="I understand that its members, topics and history are deleted for good."
          onClose={() => setPending(null)}
          onConfirm={async () => {
            const result = await api.DELETE('/api/v1/organizations/{id}', {
              params: { header: orgHeader(), path: { id: pending.org.id } },
            });
            if (!result.response.ok) unwrap(result);
            done();
          }}
        >
          <p>This cannot be undone. The audit log keeps its entries.</p>
        </ConfirmDialog>
      )}
    </section>
  );
}
