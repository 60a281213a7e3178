import { useState } from 'react';
import { Link, useNavigate } from 'react-router';
import { api, errorText, orgHeader, unwrap } from '../../api/client';
import type { OAuth2Client } from '../../api/types';
import { useAsync } from '../../app/use-async';
import { BadgeList, StatusBadge } from '../../components/badges';
import { CopyButton } from '../../components/copy-button';
import { formatDateTime, grantLabel } from '../../components/format';
import { LockIcon } from '../../components/icons';
import { ErrorMessage, Loading } from '../../components/states';
import { useClientActions } from './client-actions';
import { ClientEditForm } from './client-edit-form';
import { ClientTypeLabel } from './clients-table';
import { userLabel, useUsers } from './use-directory';

/** The fields fixed at creation, shown read-only with the reason. */
function FixedSettings({ client }: { client: OAuth2Client }) {
  const { byId } = useUsers();
  return (
    <section className="card" aria-labelledby="fixed-title">
      <h2 id="fixed-title">Fixed at creation</h2>
      <p className="hint">
        Client type, grant types and response types cannot be changed. To change them, delete the client and
        register it again.
      </p>
      <dl className="facts">
        <dt>Client ID</dt>
        <dd className="client-id">
          <code className="mono">{client.clientId}</code>
          <CopyButton value={client.clientId} label="Copy client ID" />
        </dd>
        <dt>Client type</dt>
        <dd>
          <ClientTypeLabel type={client.clientType} />
        </dd>
        <dt>Grant types</dt>
        <dd data-readonly="true">
          <BadgeList items={client.grantTypes.map(grantLabel)} /> <LockIcon />
          <span className="visually-hidden">read-only</span>
        </dd>
        <dt>Response types</dt>
        <dd>{client.responseTypes.length ? client.responseTypes.join(', ') : 'None'}</dd>
        <dt>Client secret</dt>
        <dd>
          {client.clientType === 'confidential' ? 'Set; shown only once at registration' : 'None (PKCE)'}
        </dd>
        <dt>Created</dt>
        <dd>
          {formatDateTime(client.createdAt)} by {userLabel(client.createdBy, byId)}
        </dd>
        <dt>Updated</dt>
        <dd>
          {formatDateTime(client.updatedAt)} by {userLabel(client.updatedBy, byId)}
        </dd>
      </dl>
    </section>
  );
}

/** One client: status actions, its fixed settings, and the edit form for the editable ones. */
export function ClientDetailPage({ id }: { id: string }) {
  const navigate = useNavigate();
  const [error, setError] = useState<string | null>(null);
  const loaded = useAsync(
    async () =>
      unwrap(await api.GET('/api/v1/oauth2/clients/{id}', { params: { header: orgHeader(), path: { id } } }))
        .data,
    [id],
  );
  const [override, setOverride] = useState<OAuth2Client | null>(null);
  const client = override ?? loaded.data;
  const actions = useClientActions((changed, deleted) => {
    if (deleted) navigate('/oauth2/clients');
    else setOverride(changed);
  });
  const run = (task: () => Promise<void> | void) => {
    setError(null);
    Promise.resolve(task()).catch((failure: unknown) => setError(errorText(failure)));
  };

  return (
    <section className="page" aria-labelledby="client-title">
      <p className="breadcrumb">
        <Link to="/oauth2/clients">← OAuth2 clients</Link>
      </p>
      {loaded.loading && !client && <Loading label="Loading client…" />}
      <ErrorMessage error={loaded.error} onRetry={loaded.reload} />
      {client && (
        <>
          <header className="page-header">
            <div>
              <h1 id="client-title">{client.name}</h1>
              <p>
                <StatusBadge status={client.status} />{' '}
                {client.status === 'disabled' && (
                  <span className="muted">
                    New token requests are refused; issued tokens stay valid until they expire.
                  </span>
                )}
              </p>
            </div>
            <div className="button-row">
              {client.status === 'active' ? (
                <button
                  type="button"
                  className="button"
                  onClick={() => run(() => actions.askDisable(client))}
                >
                  Disable
                </button>
              ) : (
                <button type="button" className="button" onClick={() => run(() => actions.enable(client))}>
                  Enable
                </button>
              )}
              <button
                type="button"
                className="button button-danger"
                onClick={() => actions.askDelete(client)}
              >
                Delete…
              </button>
            </div>
          </header>
          <ErrorMessage error={error} />
          <div className="detail-grid">
            <ClientEditForm client={client} onSaved={setOverride} />
            <FixedSettings client={client} />
          </div>
          {actions.dialogs}
        </>
      )}
    </section>
  );
}
