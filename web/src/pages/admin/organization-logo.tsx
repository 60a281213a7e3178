import { useEffect, useState } from 'react';
import { orgHeader } from '../../api/client';
import { LOGO_CHANGED } from './admin-api';

/** A blob as a data: URL (the console's Content-Security-Policy allows data: images, not blob:). */
function dataUrlOf(blob: Blob): Promise<string> {
  return new Promise((resolve, reject) => {
    const reader = new FileReader();
    reader.onload = () => resolve(String(reader.result));
    reader.onerror = () => reject(reader.error);
    reader.readAsDataURL(blob);
  });
}

/**
 * The organization's logo in the header. Fetched with the organization header (an <img src> cannot send
 * it) and shown from a data: URL; nothing while there is none.
 */
export function OrganizationLogo({ organizationId }: { organizationId: string | null }) {
  const [url, setUrl] = useState<string | null>(null);
  const [version, setVersion] = useState(0);
  useEffect(() => {
    const bump = () => setVersion((v) => v + 1);
    window.addEventListener(LOGO_CHANGED, bump);
    return () => window.removeEventListener(LOGO_CHANGED, bump);
  }, []);
  // biome-ignore lint/correctness/useExhaustiveDependencies: version re-fetches after an upload.
  useEffect(() => {
    setUrl(null);
    if (!organizationId) return;
    let cancelled = false;
    fetch(`/api/v1/organizations/${organizationId}/logo`, {
      headers: orgHeader(),
      credentials: 'same-origin',
    })
      .then(async (response) => {
        if (!response.ok || cancelled) return;
        const url = await dataUrlOf(await response.blob());
        if (!cancelled) setUrl(url);
      })
      .catch(() => {});
    return () => {
      cancelled = true;
    };
  }, [organizationId, version]);
  if (!url) return null;
  return <img className="org-logo" src={url} alt="Organization logo" data-testid="org-logo" />;
}
