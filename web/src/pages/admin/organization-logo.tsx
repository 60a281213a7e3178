import { useEffect, useState } from 'react';
import { orgHeader } from '../../api/client';
import { LOGO_CHANGED } from './admin-api';

/**
 * The organization's logo in the header. Fetched with the organization header (an <img src> cannot send
 * it) and shown from a blob URL; nothing while there is none.
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
    let objectUrl: string | null = null;
    let cancelled = false;
    fetch(`/api/v1/organizations/${organizationId}/logo`, {
      headers: orgHeader(),
      credentials: 'same-origin',
    })
      .then(async (response) => {
        if (!response.ok || cancelled) return;
        objectUrl = URL.createObjectURL(await response.blob());
        if (!cancelled) setUrl(objectUrl);
      })
      .catch(() => {});
    return () => {
      cancelled = true;
      if (objectUrl) URL.revokeObjectURL(objectUrl);
    };
  }, [organizationId, version]);
  if (!url) return null;
  return <img className="org-logo" src={url} alt="Organization logo" data-testid="org-logo" />;
}
