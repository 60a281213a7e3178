import type { ClientType, GrantType } from '../../api/types';

/** Limits from the spec ("Limits" and the client field table). */
export const NAME_MAX = 100;
export const DESCRIPTION_MAX = 500;

/** Grant types in display order. */
export const GRANT_TYPES: readonly GrantType[] = [
  'authorization_code',
  'client_credentials',
  'refresh_token',
];

const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);
const CUSTOM_SCOPE = /^[a-z][a-z0-9:._-]{0,63}$/;

/** What the register and edit forms hold while the user types. */
export interface ClientDraft {
  name: string;
  description: string;
  clientType: ClientType;
  grantTypes: GrantType[];
  redirectUris: string[];
  allowedScopes: string[];
  actingUserId: string;
  /** The organizations the client may act in. */
  organizationIds: string[];
}

export type DraftErrors = Partial<Record<keyof ClientDraft, string>> & {
  redirectUriItems?: (string | null)[];
};

/** Characters as a person counts them (code points), as the server counts them. */
export function characterCount(text: string): number {
  return [...text.trim()].length;
}

/** Whether `grant` may be chosen for `clientType`: client credentials never for public clients. */
export function isGrantAllowed(grant: GrantType, clientType: ClientType): boolean {
  return !(grant === 'client_credentials' && clientType === 'public');
}

/** Whether `grant` is forced on: refresh token comes with authorization code for confidential clients. */
export function isGrantLocked(
  grant: GrantType,
  draft: Pick<ClientDraft, 'clientType' | 'grantTypes'>,
): boolean {
  return (
    grant === 'refresh_token' &&
    draft.clientType === 'confidential' &&
    draft.grantTypes.includes('authorization_code')
  );
}

/** Applies the grant-type rules after any change: drops what the type forbids, adds what it requires. */
export function normalizeGrants(clientType: ClientType, grants: readonly GrantType[]): GrantType[] {
  const set = new Set(grants.filter((grant) => isGrantAllowed(grant, clientType)));
  if (clientType === 'confidential' && set.has('authorization_code')) set.add('refresh_token');
  if (!set.has('authorization_code')) set.delete('refresh_token');
  return GRANT_TYPES.filter((grant) => set.has(grant));
}

/** Why a redirect URI would be refused, or null: https, or http only on localhost, 127.0.0.1 or [::1]. */
export function redirectUriProblem(uri: string): string | null {
  if (uri === '') return 'Enter a URI.';
  if (/[\s\p{Cc}]/u.test(uri)) return 'Must not contain spaces.';
  if (uri.includes('*')) return 'Wildcards are not allowed: each URI is matched exactly.';
  if (uri.includes('#')) return 'Must not contain a fragment (#).';
  if (!URL.canParse(uri)) return 'Must be an absolute URI, such as https://app.example.com/callback.';
  const url = new URL(uri);
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return 'Must use https://.';
  if (!uri.startsWith(`${url.protocol}//`) || url.hostname === '') return 'Must name a host.';
  if (url.username || url.password) return 'Must not contain a user name or password.';
  if (url.protocol === 'http:' && !LOOPBACK_HOSTS.has(url.hostname)) {
    return 'Must use https:// unless the host is localhost, 127.0.0.1 or [::1].';
  }
  return null;
}

/** Whether a custom scope string has the accepted shape. */
export function isValidScope(scope: string): boolean {
  return CUSTOM_SCOPE.test(scope);
}

/** Checks the draft against every rule; an empty object means it can be sent. */
export function validateDraft(draft: ClientDraft): DraftErrors {
  const errors: DraftErrors = {};
  const nameLength = characterCount(draft.name);
  if (nameLength < 1) errors.name = 'Enter an application name.';
  else if (nameLength > NAME_MAX) errors.name = `Use at most ${NAME_MAX} characters (now ${nameLength}).`;
  const descriptionLength = characterCount(draft.description);
  if (descriptionLength > DESCRIPTION_MAX) {
    errors.description = `Use at most ${DESCRIPTION_MAX} characters (now ${descriptionLength}).`;
  }
  if (draft.grantTypes.length === 0) errors.grantTypes = 'Choose at least one grant type.';
  if (draft.grantTypes.includes('authorization_code')) {
    const uris = draft.redirectUris.map((uri) => uri.trim());
    const items = uris.map((uri, index) =>
      uris.indexOf(uri) !== index ? 'This URI is listed twice.' : redirectUriProblem(uri),
    );
    if (uris.length === 0) errors.redirectUris = 'Authorization code needs at least one redirect URI.';
    else if (items.some(Boolean)) {
      errors.redirectUris = 'Fix the redirect URIs marked below.';
      errors.redirectUriItems = items;
    }
  }
  if (draft.allowedScopes.length === 0) errors.allowedScopes = 'Choose at least one scope.';
  if (draft.organizationIds.length === 0) errors.organizationIds = 'Choose at least one organization.';
  return errors;
}

/** The draft as the API's wire fields (texts trimmed, fields the grants do not use left out). */
export function draftToWire(draft: ClientDraft) {
  const usesCode = draft.grantTypes.includes('authorization_code');
  const usesCredentials = draft.grantTypes.includes('client_credentials');
  return {
    name: draft.name.trim(),
    description: draft.description.trim(),
    redirectUris: usesCode ? draft.redirectUris.map((uri) => uri.trim()) : [],
    allowedScopes: draft.allowedScopes,
    actingUserId: usesCredentials && draft.actingUserId ? draft.actingUserId : null,
    organizationIds: [...draft.organizationIds].sort(),
  };
}
