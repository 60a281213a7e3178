import { type FormEvent, useState } from 'react';
import { api, errorText, orgHeader, unwrap } from '../../api/client';
import type { CreatedPat, CreatePatBody } from '../../api/types';
import { Dialog } from '../../components/dialog';
import { formatDateTime } from '../../components/format';
import { ScopePicker } from '../../components/scope-picker';
import { ErrorMessage } from '../../components/states';
import { SecretReveal } from '../clients/secret-reveal';

type Expiry = NonNullable<CreatePatBody['expiresInDays']>;
const EXPIRY_CHOICES: Expiry[] = [30, 90, 180, 365];
const NAME_MAX = 255;

/** Creates a personal access token, then shows its value this one time. */
export function CreatePatDialog(props: { scopes: string[]; onClose: () => void; onCreated: () => void }) {
  const [name, setName] = useState('');
  const [expiresInDays, setExpiry] = useState<Expiry>(90);
  const [scopes, setScopes] = useState<string[]>([]);
  const [touched, setTouched] = useState(false);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [created, setCreated] = useState<CreatedPat | null>(null);

  const nameLength = [...name.trim()].length;
  const nameError =
    nameLength === 0
      ? 'Enter a name.'
      : nameLength > NAME_MAX
        ? `Use at most ${NAME_MAX} characters.`
        : undefined;
  const scopeError = scopes.length === 0 ? 'Choose at least one scope.' : undefined;

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setTouched(true);
    if (nameError || scopeError) return;
    setBusy(true);
    setError(null);
    try {
      const body = { name: name.trim(), expiresInDays, scopes };
      setCreated(
        unwrap(await api.POST('/api/v1/oauth2/tokens', { params: { header: orgHeader() }, body })).data,
      );
      props.onCreated();
    } catch (failure) {
      setError(errorText(failure));
    } finally {
      setBusy(false);
    }
  };

  if (created) {
    return (
      <Dialog title="Token created" onClose={props.onClose} closable={false}>
        <div className="dialog-body">
          <p>
            <strong>{created.name}</strong> expires {formatDateTime(created.expiresAt)}.
          </p>
          <SecretReveal
            label="Token"
            value={created.token}
            warning="Copy the token now. It is shown only once and cannot be retrieved later. Treat it like a password."
          />
          <p className="hint">
            Send it as <code>Authorization: Bearer …</code> with <code>X-Organization-ID</code>.
          </p>
        </div>
        <footer className="dialog-actions">
          <button type="button" className="button button-primary" onClick={props.onClose}>
            I have copied the token
          </button>
        </footer>
      </Dialog>
    );
  }

  return (
    <Dialog title="Create a personal access token" onClose={props.onClose} wide>
      <form onSubmit={submit} noValidate>
        <div className="dialog-body">
          <label className="field">
            <span>Name</span>
            <input
              value={name}
              onChange={(event) => {
                setName(event.target.value);
                setTouched(true);
              }}
              placeholder="e.g. Grafana on line 3"
              aria-invalid={touched && nameError ? true : undefined}
            />
            {touched && nameError && <span className="field-error">{nameError}</span>}
          </label>
          <fieldset className="field">
            <legend>Expires after</legend>
            <div className="choice-row compact">
              {EXPIRY_CHOICES.map((days) => (
                <label key={days} className={expiresInDays === days ? 'choice selected' : 'choice'}>
                  <input
                    type="radio"
                    name="expiresInDays"
                    value={days}
                    checked={expiresInDays === days}
                    onChange={() => setExpiry(days)}
                  />
                  {days} days
                </label>
              ))}
            </div>
          </fieldset>
          <ScopePicker
            legend="Scopes"
            offered={props.scopes}
            value={scopes}
            onChange={(next) => {
              setScopes(next);
              setTouched(true);
            }}
            error={touched ? scopeError : undefined}
          />
          <p className="hint">
            A token can do no more than you can: if your role changes, so does what it may do.
          </p>
          <ErrorMessage error={error} />
        </div>
        <footer className="dialog-actions">
          <button type="button" className="button" onClick={props.onClose} disabled={busy}>
            Cancel
          </button>
          <button type="submit" className="button button-primary" disabled={busy}>
            {busy ? 'Creating…' : 'Create token'}
          </button>
        </footer>
      </form>
    </Dialog>
  );
}
