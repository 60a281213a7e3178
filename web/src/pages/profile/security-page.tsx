import { useState } from 'react';
import { api, orgHeader, unwrap } from '../../api/client';
import type { Pat } from '../../api/types';
import { useSession } from '../../app/session';
import { useAsync } from '../../app/use-async';
import { BadgeList, StatusBadge } from '../../components/badges';
import { ConfirmDialog } from '../../components/confirm-dialog';
import { formatDateTime, formatRelative } from '../../components/format';
import { EmptyState, ErrorMessage, Loading } from '../../components/states';
import { useSupportedScopes } from '../clients/use-directory';
import { ChangePasswordForm } from './change-password-form';
import { CreatePatDialog } from './create-pat-dialog';

/** Profile, Security tab: your password and personal access tokens. */
export function SecurityPage() {
  const { session, organization } = useSession();
  const scopes = useSupportedScopes();
  const [creating, setCreating] = useState(false);
  const [revoking, setRevoking] = useState<Pat | null>(null);
  const tokens = useAsync(
    async () =>
      unwrap(
        await api.GET('/api/v1/oauth2/tokens', {
          params: { header: orgHeader(), query: { sort: 'createdAt', order: 'desc', limit: 200 } },
        }),
      ).data,
    [],
  );

  return (
    <section className="page" aria-labelledby="profile-title">
      <header className="page-header">
        <div>
          <h1 id="profile-title">{session?.user.displayName}</h1>
          <p className="muted">
            {session?.user.email}
            {organization ? ` · ${organization.role} in ${organization.name}` : ''}
            {session?.user.isSystemAdmin ? ' · System Administrator' : ''}
          </p>
        </div>
      </header>
      <div className="tabs" role="tablist" aria-label="Profile">
        <button type="button" role="tab" aria-selected="true" className="tab" id="tab-security">
          Security
        </button>
      </div>
      <div role="tabpanel" aria-labelledby="tab-security" className="tab-panel">
        <ChangePasswordForm />
        <header className="section-header">
          <div>
            <h2>Personal access tokens</h2>
            <p className="muted">
              Long-lived tokens for scripts and integrations, sent as a Bearer token. They act as you.
            </p>
          </div>
          <button type="button" className="button button-primary" onClick={() => setCreating(true)}>
            Create token
          </button>
        </header>
        <ErrorMessage error={tokens.error} onRetry={tokens.reload} />
        {tokens.loading && !tokens.data && <Loading label="Loading tokens…" />}
        {tokens.data?.length === 0 && (
          <EmptyState title="You have no personal access tokens.">
            <p>Create one to call the API or connect to MQTT from a script.</p>
          </EmptyState>
        )}
        {tokens.data && tokens.data.length > 0 && (
          <div className="table-wrap">
            <table className="table responsive-table">
              <thead>
                <tr>
                  <th scope="col">Name</th>
                  <th scope="col">Scopes</th>
                  <th scope="col">Status</th>
                  <th scope="col">Last used</th>
                  <th scope="col">Expires</th>
                  <th scope="col">Created</th>
                  <th scope="col">
                    <span className="visually-hidden">Actions</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {tokens.data.map((token) => (
                  <tr key={token.id} data-token-name={token.name}>
                    <td data-label="Name" className="cell-name">
                      {token.name}
                    </td>
                    <td data-label="Scopes">
                      <BadgeList items={token.scopes} shown={3} />
                    </td>
                    <td data-label="Status">
                      <StatusBadge status={token.status} />
                    </td>
                    <td data-label="Last used" title={formatDateTime(token.lastUsedAt)}>
                      {formatRelative(token.lastUsedAt)}
                    </td>
                    <td data-label="Expires" title={formatDateTime(token.expiresAt)}>
                      {token.status === 'revoked'
                        ? `Revoked ${formatRelative(token.revokedAt)}`
                        : formatDateTime(token.expiresAt)}
                    </td>
                    <td data-label="Created">{formatDateTime(token.createdAt)}</td>
                    <td className="cell-actions">
                      {token.status === 'active' && (
                        <button
                          type="button"
                          className="button button-small button-danger"
                          onClick={() => setRevoking(token)}
                          aria-label={`Revoke ${token.name}`}
                        >
                          Revoke
                        </button>
                      )}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </div>
      {creating && (
        <CreatePatDialog scopes={scopes} onClose={() => setCreating(false)} onCreated={tokens.reload} />
      )}
      {revoking && (
        <ConfirmDialog
          title={`Revoke ${revoking.name}?`}
          confirmLabel="Revoke token"
          danger
          onClose={() => setRevoking(null)}
          onConfirm={async () => {
            const params = { header: orgHeader(), path: { id: revoking.id } };
            unwrap(await api.DELETE('/api/v1/oauth2/tokens/{id}', { params }));
            setRevoking(null);
            tokens.reload();
          }}
        >
          <p>
            The token stops working at once, for every script and integration that uses it. This cannot be
            undone; it stays listed as revoked.
          </p>
        </ConfirmDialog>
      )}
    </section>
  );
}
