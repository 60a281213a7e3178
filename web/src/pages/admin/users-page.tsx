import { type FormEvent, useState } from 'react';
import { api, errorText, orgHeader, unwrap } from '../../api/client';
import { useAsync } from '../../app/use-async';
import { ActionsMenu } from '../../components/actions-menu';
import { StatusBadge } from '../../components/badges';
import { ConfirmDialog } from '../../components/confirm-dialog';
import { Dialog } from '../../components/dialog';
import { formatDateTime } from '../../components/format';
import { EmptyState, ErrorMessage, Loading } from '../../components/states';
import type { User } from './admin-api';
import { Pager } from './change-list';
import './admin.css';

const PAGE = 50;
type Status = 'all' | 'active' | 'deactivated' | 'deleted';

interface Draft {
  email: string;
  displayName: string;
  password: string;
  isSystemAdmin: boolean;
}

/** Create a user, edit one, or reset a password (the fields each needs). */
function UserDialog(props: {
  mode: 'create' | 'edit' | 'password';
  user?: User;
  onClose: () => void;
  onDone: () => void;
}) {
  const { mode, user } = props;
  const [draft, setDraft] = useState<Draft>({
    email: user?.email ?? '',
    displayName: user?.displayName ?? '',
    password: '',
    isSystemAdmin: user?.isSystemAdmin ?? false,
  });
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const set = <K extends keyof Draft>(key: K, value: Draft[K]) => setDraft((d) => ({ ...d, [key]: value }));

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      if (mode === 'create') {
        unwrap(await api.POST('/api/v1/admin/users', { params: { header: orgHeader() }, body: draft }));
      } else {
        const body =
          mode === 'password'
            ? { password: draft.password }
            : { email: draft.email, displayName: draft.displayName, isSystemAdmin: draft.isSystemAdmin };
        unwrap(
          await api.PATCH('/api/v1/admin/users/{id}', {
            params: { header: orgHeader(), path: { id: user!.id } },
            body,
          }),
        );
      }
      props.onDone();
    } catch (failure) {
      setError(errorText(failure));
      setBusy(false);
    }
  };

  const title =
    mode === 'create'
      ? 'Create a user'
      : mode === 'edit'
        ? `Edit ${user!.email}`
        : `Reset the password of ${user!.email}`;
  return (
    <Dialog title={title} onClose={props.onClose}>
      <form onSubmit={submit} noValidate>
        <div className="dialog-body">
          {mode !== 'password' && (
            <>
              <label className="field">
                <span>Email</span>
                <input
                  type="email"
                  value={draft.email}
                  onChange={(event) => set('email', event.target.value)}
                />
              </label>
              <label className="field">
                <span>Display name</span>
                <input
                  value={draft.displayName}
                  maxLength={100}
                  onChange={(event) => set('displayName', event.target.value)}
                />
              </label>
            </>
          )}
          {mode !== 'edit' && (
            <label className="field">
              <span>{mode === 'password' ? 'New password' : 'Password'}</span>
              <input
                type="password"
                autoComplete="new-password"
                value={draft.password}
                onChange={(event) => set('password', event.target.value)}
              />
              <small className="hint">
                At least 12 characters: a phrase of a few uncommon words. Keyboard walks and the user's name
                or e-mail are refused.
              </small>
            </label>
          )}
          {mode !== 'password' && (
            <label className="checkbox">
              <input
                type="checkbox"
                checked={draft.isSystemAdmin}
                onChange={(event) => set('isSystemAdmin', event.target.checked)}
              />
              System Administrator
            </label>
          )}
          <ErrorMessage error={error} />
        </div>
        <footer className="dialog-actions">
          <button type="button" className="button" onClick={props.onClose} disabled={busy}>
            Cancel
          </button>
          <button type="submit" className="button button-primary" disabled={busy}>
            {mode === 'create' ? 'Create user' : mode === 'edit' ? 'Save' : 'Set password'}
          </button>
        </footer>
      </form>
    </Dialog>
  );
}

type Pending =
  | { kind: 'create' }
  | { kind: 'edit'; user: User }
  | { kind: 'password'; user: User }
  | { kind: 'delete'; user: User };

/** Every user account, for System Administrators. */
export function UsersPage() {
  const [status, setStatus] = useState<Status>('all');
  const [search, setSearch] = useState('');
  const [offset, setOffset] = useState(0);
  const [pending, setPending] = useState<Pending | null>(null);
  const [error, setError] = useState<string | null>(null);
  const list = useAsync(
    async () =>
      unwrap(
        await api.GET('/api/v1/admin/users', {
          params: {
            header: orgHeader(),
            query: { status, limit: PAGE, offset, ...(search.trim() ? { search: search.trim() } : {}) },
          },
        }),
      ),
    [status, search, offset],
  );
  const done = () => {
    setPending(null);
    list.reload();
  };
  const act = (run: () => Promise<unknown>) => {
    setError(null);
    run().then(list.reload, (failure: unknown) => setError(errorText(failure)));
  };
  const setUserStatus = (user: User, next: 'active' | 'deactivated') =>
    act(async () =>
      unwrap(
        await api.PUT('/api/v1/admin/users/{id}/status', {
          params: { header: orgHeader(), path: { id: user.id } },
          body: { status: next },
        }),
      ),
    );
  const restore = (user: User) =>
    act(async () =>
      unwrap(
        await api.POST('/api/v1/admin/users/{id}/restore', {
          params: { header: orgHeader(), path: { id: user.id } },
        }),
      ),
    );

  return (
    <section className="page" aria-labelledby="users-title">
      <header className="page-header">
        <div>
          <h1 id="users-title">Users</h1>
          <p className="muted">Every account on this instance. Only System Administrators see this page.</p>
        </div>
        <button
          type="button"
          className="button button-primary"
          onClick={() => setPending({ kind: 'create' })}
        >
          Create user
        </button>
      </header>
      <div className="toolbar">
        <fieldset className="segmented">
          <legend className="visually-hidden">Status</legend>
          {(['all', 'active', 'deactivated', 'deleted'] as const).map((value) => (
            <button
              key={value}
              type="button"
              aria-pressed={status === value}
              onClick={() => {
                setStatus(value);
                setOffset(0);
              }}
            >
              {value.charAt(0).toUpperCase() + value.slice(1)}
            </button>
          ))}
        </fieldset>
        <label className="search">
          <span className="visually-hidden">Search users</span>
          <input
            type="search"
            placeholder="Search email or name"
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
      {list.loading && !list.data && <Loading label="Loading users…" />}
      {list.data && list.data.data.length === 0 && <EmptyState title="No users match." />}
      {list.data && list.data.data.length > 0 && (
        <div className="table-wrap">
          <table className="table responsive-table">
            <thead>
              <tr>
                <th scope="col">User</th>
                <th scope="col">Status</th>
                <th scope="col">System role</th>
                <th scope="col">Last sign-in</th>
                <th scope="col">
                  <span className="visually-hidden">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {list.data.data.map((user) => (
                <tr key={user.id} data-user={user.email}>
                  <td data-label="User" className="cell-name">
                    {user.displayName} <small className="muted">{user.email}</small>
                  </td>
                  <td data-label="Status">
                    <StatusBadge status={user.deleted ? 'deleted' : user.status} />
                  </td>
                  <td data-label="System role">{user.isSystemAdmin ? 'System Administrator' : '—'}</td>
                  <td data-label="Last sign-in">{formatDateTime(user.lastLoginAt)}</td>
                  <td className="cell-actions">
                    <ActionsMenu
                      label={`Actions for ${user.email}`}
                      actions={
                        user.deleted
                          ? [{ label: 'Restore', onSelect: () => restore(user) }]
                          : [
                              { label: 'Edit…', onSelect: () => setPending({ kind: 'edit', user }) },
                              {
                                label: 'Reset password…',
                                onSelect: () => setPending({ kind: 'password', user }),
                              },
                              user.status === 'active'
                                ? { label: 'Deactivate', onSelect: () => setUserStatus(user, 'deactivated') }
                                : { label: 'Activate', onSelect: () => setUserStatus(user, 'active') },
                              {
                                label: 'Delete…',
                                danger: true,
                                onSelect: () => setPending({ kind: 'delete', user }),
                              },
                            ]
                      }
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
      {(pending?.kind === 'create' || pending?.kind === 'edit' || pending?.kind === 'password') && (
        <UserDialog
          mode={pending.kind}
          user={'user' in pending ? pending.user : undefined}
          onClose={() => setPending(null)}
          onDone={done}
        />
      )}
      {pending?.kind === 'delete' && (
        <ConfirmDialog
          title={`Delete ${pending.user.email}?`}
          confirmLabel="Delete user"
          danger
          onClose={() => setPending(null)}
          onConfirm={async () => {
            const result = await api.DELETE('/api/v1/admin/users/{id}', {
              params: { header: orgHeader(), path: { id: pending.user.id } },
            });
            if (!result.response.ok) unwrap(result);
            done();
          }}
        >
          <p>They can no longer sign in; a System Administrator can restore the account.</p>
        </ConfirmDialog>
      )}
    </section>
  );
}
