import { type FormEvent, useState } from 'react';
import { api, errorText, orgHeader, unwrap } from '../../api/client';
import type { OAuth2Client } from '../../api/types';
import { ScopePicker } from '../../components/scope-picker';
import { ErrorMessage } from '../../components/states';
import { ActingUserField } from './acting-user-field';
import { DescriptionField, NameField } from './client-fields';
import { type ClientDraft, draftToWire, validateDraft } from './client-rules';
import { OrganizationsField } from './organizations-field';
import { RedirectUrisField } from './redirect-uris-field';
import { useSupportedScopes } from './use-directory';

function toDraft(client: OAuth2Client): ClientDraft {
  return {
    name: client.name,
    description: client.description,
    clientType: client.clientType,
    grantTypes: client.grantTypes,
    redirectUris: client.redirectUris,
    allowedScopes: client.allowedScopes,
    actingUserId: client.actingUserId ?? '',
    organizationIds: client.organizationIds,
  };
}

/** Edits the editable fields only: name, description, redirect URIs, allowed scopes, acting user, organizations. */
export function ClientEditForm({
  client,
  onSaved,
}: {
  client: OAuth2Client;
  onSaved: (c: OAuth2Client) => void;
}) {
  const scopes = useSupportedScopes();
  const [draft, setDraft] = useState(() => toDraft(client));
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [saved, setSaved] = useState(false);
  const errors = validateDraft(draft);
  const original = JSON.stringify(draftToWire(toDraft(client)));
  const dirty = JSON.stringify(draftToWire(draft)) !== original;
  const change = <K extends keyof ClientDraft>(field: K, value: ClientDraft[K]) => {
    setSaved(false);
    setDraft((previous) => ({ ...previous, [field]: value }));
  };

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    if (Object.keys(errors).length > 0 || !dirty) return;
    setBusy(true);
    setError(null);
    try {
      const wire = draftToWire(draft);
      const before = draftToWire(toDraft(client));
      const body = Object.fromEntries(
        Object.entries(wire).filter(
          ([key, value]) => JSON.stringify(value) !== JSON.stringify(before[key as keyof typeof before]),
        ),
      );
      const params = { header: orgHeader(), path: { id: client.id } };
      const updated = unwrap(await api.PATCH('/api/v1/oauth2/clients/{id}', { params, body })).data;
      setDraft(toDraft(updated));
      setSaved(true);
      onSaved(updated);
    } catch (failure) {
      setError(errorText(failure));
    } finally {
      setBusy(false);
    }
  };

  return (
    <form className="card" onSubmit={submit} noValidate aria-labelledby="edit-title">
      <h2 id="edit-title">Settings</h2>
      <NameField value={draft.name} onChange={(v) => change('name', v)} error={errors.name} />
      <DescriptionField
        value={draft.description}
        onChange={(v) => change('description', v)}
        error={errors.description}
      />
      {client.grantTypes.includes('authorization_code') && (
        <RedirectUrisField
          value={draft.redirectUris}
          onChange={(v) => change('redirectUris', v)}
          error={errors.redirectUris}
          itemErrors={errors.redirectUriItems}
        />
      )}
      <ScopePicker
        legend="Allowed scopes"
        offered={scopes}
        value={draft.allowedScopes}
        onChange={(v) => change('allowedScopes', v)}
        error={errors.allowedScopes}
        allowCustom
      />
      {client.grantTypes.includes('client_credentials') && (
        <ActingUserField value={draft.actingUserId} onChange={(v) => change('actingUserId', v)} />
      )}
      <OrganizationsField
        value={draft.organizationIds}
        onChange={(v) => change('organizationIds', v)}
        error={errors.organizationIds}
      />
      <ErrorMessage error={error} />
      <div className="form-actions">
        <button type="submit" className="button button-primary" disabled={busy || !dirty}>
          {busy ? 'Saving…' : 'Save changes'}
        </button>
        <button
          type="button"
          className="button"
          disabled={busy || !dirty}
          onClick={() => setDraft(toDraft(client))}
        >
          Discard changes
        </button>
        {saved && !dirty && (
          <span className="success" role="status">
            Saved.
          </span>
        )}
      </div>
    </form>
  );
}
