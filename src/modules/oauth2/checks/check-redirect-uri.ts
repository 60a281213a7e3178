/** Longest redirect URI a client may register. */
export const MAX_REDIRECT_URI_LENGTH = 2000;

// Plain http is allowed only towards the user's own machine (RFC 8252 §7.3, RFC 9700 §2.6).
const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);

/**
 * Checks a redirect URI a client wants to register. Returns why it is refused, phrased to follow the
 * field name ("must not contain a fragment"), or null when it is acceptable.
 */
export function validateRedirectUriForRegistration(uri: string): string | null {
  if (typeof uri !== 'string' || uri === '') return 'must be a non-empty string';
  if (uri.length > MAX_REDIRECT_URI_LENGTH) {
    return `must be at most ${MAX_REDIRECT_URI_LENGTH} characters`;
  }
  // The URL parser silently drops surrounding spaces, tabs and newlines; the registered string must
  // be exactly what is compared later, so such characters are refused instead.
  if (/[\s\p{Cc}]/u.test(uri)) return 'must not contain spaces or control characters';
  if (uri.includes('*')) return 'must not contain wildcards (*); every redirect URI is matched exactly';
  if (uri.includes('#')) return 'must not contain a fragment (#)'; // RFC 6749 §3.1.2
  const scheme = /^([A-Za-z][A-Za-z0-9+.-]*):/.exec(uri)?.[1];
  if (scheme === undefined || !URL.canParse(uri)) return 'must be an absolute URI';
  if (scheme !== 'https' && scheme !== 'http') {
    return 'must use https:// (or http:// for localhost, 127.0.0.1 or [::1])';
  }
  if (!uri.startsWith(`${scheme}://`)) return 'must be an absolute URI with an authority (scheme://host)';
  const url = new URL(uri);
  const authority = uri.slice(scheme.length + 3).split(/[/?]/, 1)[0] ?? '';
  if (authority.includes('@') || url.username !== '' || url.password !== '') {
    return 'must not contain user information (user:password@)';
  }
  if (url.hostname === '') return 'must name a host';
  if (scheme === 'http' && !LOOPBACK_HOSTS.has(url.hostname)) {
    return 'must use https:// unless the host is localhost, 127.0.0.1 or [::1]';
  }
  return null;
}

/**
 * True when `requested` equals one registered redirect URI exactly: case-sensitive, no normalisation,
 * no prefix or pattern match (RFC 9700 §4.1.3, OAuth 2.1 §2.3.1).
 */
export function matchRedirectUri(requested: string, registered: readonly string[]): boolean {
  if (typeof requested !== 'string' || requested === '') return false;
  return registered.some((candidate) => candidate === requested);
}

/**
 * The redirect URI of an authorization request: the requested one when it matches, the only
 * registered one when none was requested (RFC 6749 §3.1.2.3), otherwise null (show the error to the
 * user, never redirect).
 */
export function resolveRedirectUri(
  requested: string | undefined,
  registered: readonly string[],
): string | null {
  if (requested === undefined || requested === '') {
    return registered.length === 1 ? (registered[0] ?? null) : null;
  }
  return matchRedirectUri(requested, registered) ? requested : null;
}
