import { Link, useNavigate } from 'react-router';
import type { AdminUser, OAuth2Client } from '../../api/types';
import { ActionsMenu } from '../../components/actions-menu';
import { BadgeList, StatusBadge } from '../../components/badges';
import { CopyButton } from '../../components/copy-button';
import { formatDateTime, grantLabel } from '../../components/format';
import { ClientTypeIcon } from './client-fields';
import { organizationLabel, useOrganizationOptions } from './organizations-field';
import { userLabel } from './use-directory';

/** The spec's client list badges: first two scopes, then +N. */
const SCOPES_SHOWN = 2;

/** Client type as icon and label. */
export function ClientTypeLabel({ type }: { type: OAuth2Client['clientType'] }) {
  return (
    <span className="client-type">
      <ClientTypeIcon type={type} />
      {type === 'confidential' ? 'Confidential' : 'Public'}
    </span>
  );
}

/** Who and when, in one cell. */
function Stamp({ at, by, users }: { at: string; by: string | null; users: Map<string, AdminUser> }) {
  return (
    <span className="stamp">
      <span>{formatDateTime(at)}</span>
      <small className="muted">{userLabel(by, users)}</small>
    </span>
  );
}

/** The client list as a table (cards on a narrow screen), one actions menu per row. */
export function ClientsTable(props: {
  clients: OAuth2Client[];
  users: Map<string, AdminUser>;
  onEnable: (client: OAuth2Client) => void;
  onDisable: (client: OAuth2Client) => void;
  onDelete: (client: OAuth2Client) => void;
}) {
  const organizations = useOrganizationOptions();
  const navigate = useNavigate();
  return (
    <div className="table-wrap">
      <table className="table responsive-table">
        <thead>
          <tr>
            <th scope="col">Name</th>
            <th scope="col">Type</th>
            <th scope="col">Client ID</th>
            <th scope="col">Grant types</th>
            <th scope="col">Allowed scopes</th>
            <th scope="col">Organizations</th>
            <th scope="col">Status</th>
            <th scope="col">Created</th>
            <th scope="col">Updated</th>
            <th scope="col">
              <span className="visually-hidden">Actions</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {props.clients.map((client) => (
            <tr key={client.id} data-client-id={client.clientId}>
              <td data-label="Name" className="cell-name">
                <Link to={`/oauth2/clients/${client.id}`}>{client.name}</Link>
                {client.description && <small className="muted description">{client.description}</small>}
              </td>
              <td data-label="Type">
                <ClientTypeLabel type={client.clientType} />
              </td>
              <td data-label="Client ID">
                <span className="client-id">
                  <code className="mono truncate" title={client.clientId}>
                    {client.clientId}
                  </code>
                  <CopyButton value={client.clientId} label={`Copy client ID of ${client.name}`} />
                </span>
              </td>
              <td data-label="Grant types">
                <BadgeList items={client.grantTypes.map(grantLabel)} />
              </td>
              <td data-label="Allowed scopes" className="cell-scopes">
                <BadgeList items={client.allowedScopes} shown={SCOPES_SHOWN} />
              </td>
              <td data-label="Organizations">
                <BadgeList items={client.organizationIds.map((id) => organizationLabel(id, organizations))} />
              </td>
              <td data-label="Status">
                <StatusBadge status={client.status} />
              </td>
              <td data-label="Created">
                <Stamp at={client.createdAt} by={client.createdBy} users={props.users} />
              </td>
              <td data-label="Updated">
                <Stamp at={client.updatedAt} by={client.updatedBy} users={props.users} />
              </td>
              <td className="cell-actions">
                <ActionsMenu
                  label={`Actions for ${client.name}`}
                  actions={[
                    { label: 'View and edit', onSelect: () => navigate(`/oauth2/clients/${client.id}`) },
                    client.status === 'active'
                      ? { label: 'Disable', onSelect: () => props.onDisable(client) }
                      : { label: 'Enable', onSelect: () => props.onEnable(client) },
                    { label: 'Delete…', onSelect: () => props.onDelete(client), danger: true },
                  ]}
                />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
