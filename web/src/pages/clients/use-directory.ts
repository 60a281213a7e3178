import { useEffect, useState } from 'react';
import { api, orgHeader } from '../../api/client';
import type { AdminUser } from '../../api/types';

/** Scopes the server offers (discovery `scopes_supported`); a built-in fallback if it cannot be read. */
const FALLBACK_SCOPES = ['openid', 'profile', 'email', 'uns:read', 'uns:write', 'uns:publish'];

/** The scopes a client or token may be given, read once from the discovery document. */
export function useSupportedScopes(): string[] {
  const [scopes, setScopes] = useState<string[]>(FALLBACK_SCOPES);
  useEffect(() => {
    fetch('/.well-known/openid-configuration')
      .then((response) => (response.ok ? response.json() : null))
      .then((metadata: { scopes_supported?: unknown } | null) => {
        const list = metadata?.scopes_supported;
        if (Array.isArray(list)) setScopes(list.filter((s): s is string => typeof s === 'string'));
      })
      .catch(() => undefined);
  }, []);
  return scopes;
}

/** Users by id, for "created by" names and the acting-user picker (System Administrators only). */
export function useUsers(search = ''): { users: AdminUser[]; byId: Map<string, AdminUser> } {
  const [users, setUsers] = useState<AdminUser[]>([]);
  useEffect(() => {
    let current = true;
    api
      .GET('/api/v1/admin/users', {
        params: { header: orgHeader(), query: { limit: 200, ...(search ? { search } : {}) } },
      })
      .then((result) => {
        if (current && result.data) setUsers(result.data.data);
      })
      .catch(() => undefined);
    return () => {
      current = false;
    };
  }, [search]);
  return { users, byId: new Map(users.map((user) => [user.id, user])) };
}

/** A user's name for a table cell: display name, email, or the raw id when unknown. */
export function userLabel(id: string | null, byId: Map<string, AdminUser>): string {
  if (!id) return '—';
  const user = byId.get(id);
  return user ? user.displayName || user.email : id;
}
