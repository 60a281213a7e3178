import { useState } from 'react';
import { api, orgHeader, unwrap } from '../../api/client';
import type { OAuth2Client } from '../../api/types';
import { ConfirmDialog } from '../../components/confirm-dialog';

type Pending = { kind: 'disable' | 'delete'; client: OAuth2Client } | null;

/** Sets a client's status through its enable or disable action. */
export async function setClientStatus(client: OAuth2Client, enable: boolean): Promise<OAuth2Client> {
  const params = { header: orgHeader(), path: { id: client.id } };
  const result = enable
    ? await api.POST('/api/v1/oauth2/clients/{id}/enable', { params })
    : await api.POST('/api/v1/oauth2/clients/{id}/disable', { params });
  return unwrap(result).data;
}

/**
 * Enable, disable and delete for a client, shared by the list's actions menu and the detail view.
 * Disable and delete ask first; `dialogs` renders whichever confirmation is open.
 */
export function useClientActions(onChanged: (client: OAuth2Client, deleted: boolean) => void) {
  const [pending, setPending] = useState<Pending>(null);

  const enable = async (client: OAuth2Client) => onChanged(await setClientStatus(client, true), false);
  const askDisable = (client: OAuth2Client) => setPending({ kind: 'disable', client });
  const askDelete = (client: OAuth2Client) => setPending({ kind: 'delete', client });

  const dialogs =
    pending?.kind === 'disable' ? (
      <ConfirmDialog
        title={`Disable ${pending.client.name}?`}
        confirmLabel="Disable client"
        onClose={() => setPending(null)}
        onConfirm={async () => {
          onChanged(await setClientStatus(pending.client, false), false);
          setPending(null);
        }}
      >
        <p>
          New token requests from this client will be refused, including refresh. Access tokens it already
          holds stay valid until they expire. Its configuration is kept, and you can enable it again at any
          time.
        </p>
      </ConfirmDialog>
    ) : pending?.kind === 'delete' ? (
      <ConfirmDialog
        title={`Delete ${pending.client.name}?`}
        confirmLabel="Delete permanently"
        danger
        acknowledgement="I understand that this cannot be undone."
        onClose={() => setPending(null)}
        onConfirm={async () => {
          const params = { header: orgHeader(), path: { id: pending.client.id } };
          unwrap(await api.DELETE('/api/v1/oauth2/clients/{id}', { params }));
          onChanged(pending.client, true);
          setPending(null);
        }}
      >
        <p>Deleting this client is permanent. At once:</p>
        <ul>
          <li>all its access tokens and refresh tokens stop working;</li>
          <li>every user's consent to it is removed;</li>
          <li>
            its client ID <code>{pending.client.clientId}</code> can no longer obtain tokens.
          </li>
        </ul>
        <p>
          To use the application again you must register a new client and configure it with the new
          credentials.
        </p>
      </ConfirmDialog>
    ) : null;

  return { enable, askDisable, askDelete, dialogs };
}
