import { type FormEvent, useState } from 'react';
import { api, errorText, orgHeader, unwrap } from '../../api/client';
import type { RegisteredClient } from '../../api/types';
import { CopyButton } from '../../components/copy-button';
import { Dialog } from '../../components/dialog';
import { ScopePicker } from '../../components/scope-picker';
import { ErrorMessage } from '../../components/states';
import { ActingUserField } from './acting-user-field';
import { ClientTypeField, DescriptionField, GrantTypesField, NameField } from './client-fields';
import { type ClientDraft, draftToWire, normalizeGrants, validateDraft } from './client-rules';
import { OrganizationsField } from './organizations-field';
import { RedirectUrisField } from './redirect-uris-field';
import { SecretReveal } from './secret-reveal';
import { useSupportedScopes } from './use-directory';

const EMPTY: ClientDraft = {
  name: '',
  description: '',
  clientType: 'confidential',
  grantTypes: ['authorization_code', 'refresh_token'],
  redirectUris: [''],
  allowedScopes: ['openid'],
  actingUserId: '',
  organizationIds: [],
};

/** After registration: the client ID, and for confidential clients the secret, shown this once. */
function Registered({ client, onDone }: { client: RegisteredClient; onDone: () => void }) {
  return (
    <>
      <div className="dialog-body">
        <p>
          <strong>{client.name}</strong> is registered and active.
        </p>
        <div className="field">
          <span>Client ID</span>
          <span className="secret-row">
            <code className="mono">{client.clientId}</code>
            <CopyButton value={client.clientId} label="Copy client ID" />
          </span>
        </div>
        {client.clientSecret ? (
          <SecretReveal
            label="Client secret"
            value={client.clientSecret}
            warning="Copy the client secret now. It is shown only once and cannot be retrieved later; if it is lost, delete the client and register it again."
          />
        ) : (
          <p className="notice">Public clients have no secret: they prove themselves with PKCE.</p>
        )}
      </div>
      <footer className="dialog-actions">
        <button type="button" className="button button-primary" onClick={onDone}>
          {client.clientSecret ? 'I have copied the secret' : 'Done'}
        </button>
      </footer>
    </>
  );
}

/** The register dialog: every rule of the spec checked as the user types, then the one-time secret. */
export function RegisterDialog({ onClose, onRegistered }: { onClose: () => void; onRegistered: () => void }) {
  const scopes = useSupportedScopes();
  // Bound by default to the organization the console is in, as the API does when none is named.
  const [draft, setDraft] = useState<ClientDraft>(() => ({
    ...EMPTY,
    organizationIds: [orgHeader()['x-organization-id']].filter(Boolean),
  }));
  const [touched, setTouched] = useState<Set<string>>(new Set());
  const [submitted, setSubmitted] = useState(false);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [registered, setRegistered] = useState<RegisteredClient | null>(null);

  const errors = validateDraft(draft);
  const show = (field: keyof ClientDraft) => (submitted || touched.has(field) ? errors[field] : undefined);
  const change = <K extends keyof ClientDraft>(field: K, value: ClientDraft[K]) => {
    setTouched((previous) => new Set(previous).add(field));
    setDraft((previous) => {
      const next = { ...previous, [field]: value };
      return { ...next, grantTypes: normalizeGrants(next.clientType, next.grantTypes) };
    });
  };

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setSubmitted(true);
    if (Object.keys(errors).length > 0) return;
    setBusy(true);
    setError(null);
    try {
      const body = { ...draftToWire(draft), clientType: draft.clientType, grantTypes: draft.grantTypes };
      const result = await api.POST('/api/v1/oauth2/clients', { params: { header: orgHeader() }, body });
      setRegistered(unwrap(result).data);
      onRegistered();
    } catch (failure) {
      setError(errorText(failure));
    } finally {
      setBusy(false);
    }
  };

  if (registered) {
    return (
      <Dialog title="Client registered" onClose={onClose} closable={false}>
        <Registered client={registered} onDone={onClose} />
      </Dialog>
    );
  }

  const usesCode = draft.grantTypes.includes('authorization_code');
  return (
    <Dialog title="Register an OAuth2 client" onClose={onClose} wide>
      <form onSubmit={submit} noValidate>
        <div className="dialog-body">
          <NameField value={draft.name} onChange={(v) => change('name', v)} error={show('name')} />
          <DescriptionField
            value={draft.description}
            onChange={(v) => change('description', v)}
            error={show('description')}
          />
          <ClientTypeField value={draft.clientType} onChange={(v) => change('clientType', v)} />
          <GrantTypesField
            clientType={draft.clientType}
            value={draft.grantTypes}
            onChange={(v) => change('grantTypes', v)}
            error={show('grantTypes')}
          />
          {usesCode && (
            <RedirectUrisField
              value={draft.redirectUris}
              onChange={(v) => change('redirectUris', v)}
              error={show('redirectUris')}
              itemErrors={submitted || touched.has('redirectUris') ? errors.redirectUriItems : undefined}
            />
          )}
          <ScopePicker
            legend="Allowed scopes"
            offered={scopes}
            value={draft.allowedScopes}
            onChange={(v) => change('allowedScopes', v)}
            error={show('allowedScopes')}
            allowCustom
          />
          {draft.grantTypes.includes('client_credentials') && (
            <ActingUserField value={draft.actingUserId} onChange={(v) => change('actingUserId', v)} />
          )}
          <OrganizationsField
            value={draft.organizationIds}
            onChange={(v) => change('organizationIds', v)}
            error={show('organizationIds')}
          />
          <ErrorMessage error={error} />
          {submitted && Object.keys(errors).length > 0 && (
            <p className="field-error" role="alert">
              Fix the fields marked above to register the client.
            </p>
          )}
        </div>
        <footer className="dialog-actions">
          <button type="button" className="button" onClick={onClose} disabled={busy}>
            Cancel
          </button>
          <button type="submit" className="button button-primary" disabled={busy}>
            {busy ? 'Registering…' : 'Register client'}
          </button>
        </footer>
      </form>
    </Dialog>
  );
}
