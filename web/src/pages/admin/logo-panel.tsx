import { type ChangeEvent, useState } from 'react';
import { api, errorText, orgHeader, unwrap } from '../../api/client';
import { ErrorMessage } from '../../components/states';
import { LOGO_CHANGED } from './admin-api';
import { OrganizationLogo } from './organization-logo';

const MAX_BYTES = 512 * 1024;
const ACCEPTED = ['image/png', 'image/jpeg', 'image/webp'];

/** Uploads or removes the organization logo. The server checks the bytes; this only spares a round trip. */
export function LogoPanel({ organizationId, canEdit }: { organizationId: string; canEdit: boolean }) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [message, setMessage] = useState<string | null>(null);

  const changed = (text: string) => {
    setMessage(text);
    window.dispatchEvent(new Event(LOGO_CHANGED));
  };

  const upload = async (event: ChangeEvent<HTMLInputElement>) => {
    const file = event.target.files?.[0];
    event.target.value = '';
    if (!file) return;
    setError(null);
    setMessage(null);
    if (file.size > MAX_BYTES) {
      setError('The logo must be at most 512 KiB.');
      return;
    }
    setBusy(true);
    try {
      const bytes = await file.arrayBuffer();
      const result = await api.PUT('/api/v1/organizations/{id}/logo', {
        params: { header: orgHeader(), path: { id: organizationId } },
        body: bytes,
        bodySerializer: (body: unknown) => body as ArrayBuffer,
        headers: { 'content-type': ACCEPTED.includes(file.type) ? file.type : 'application/octet-stream' },
      });
      unwrap(result);
      changed('Logo uploaded.');
    } catch (failure) {
      setError(errorText(failure));
    } finally {
      setBusy(false);
    }
  };

  const remove = async () => {
    setBusy(true);
    setError(null);
    try {
      const result = await api.DELETE('/api/v1/organizations/{id}/logo', {
        params: { header: orgHeader(), path: { id: organizationId } },
      });
      if (!result.response.ok) unwrap(result);
      changed('Logo removed.');
    } catch (failure) {
      setError(errorText(failure));
    } finally {
      setBusy(false);
    }
  };

  return (
    <section className="card" aria-labelledby="logo-title">
      <h2 id="logo-title">Logo</h2>
      <div className="logo-preview">
        <OrganizationLogo organizationId={organizationId} />
      </div>
      <p className="muted">PNG, JPEG or WebP, at most 512 KiB. SVG is not accepted.</p>
      {canEdit && (
        <div className="button-row">
          <label className="button">
            Upload logo
            <input
              type="file"
              accept={ACCEPTED.join(',')}
              className="visually-hidden"
              onChange={upload}
              disabled={busy}
              data-testid="logo-input"
            />
          </label>
          <button type="button" className="button" onClick={remove} disabled={busy}>
            Remove logo
          </button>
        </div>
      )}
      <ErrorMessage error={error} />
      {message && (
        <p className="success" role="status">
          {message}
        </p>
      )}
    </section>
  );
}
