/** A URL's userinfo taken out: the URL without it, and the user and password it held (decoded). */
export interface UrlCredentials {
  /** The URL as written, less `user:password@`. */
  url: string;
  /** The user, when the userinfo names one. */
  username?: string;
  /** The password, when the userinfo has a non-empty one. */
  password?: string;
}

// scheme://userinfo@rest: the authority ends at the first / ? or #; its last @ ends the userinfo
// (RFC 3986 §3.2; WHATWG URL reads a stray @ in a password the same way).
const USERINFO = /^([a-z][a-z0-9+.-]*:\/\/)([^/?#]*)@/i;

function decoded(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

/**
 * Splits the userinfo (`user:password@`) out of an absolute URL, keeping the rest as written (no
 * normalization: the URL a user gave stays recognisable). Null when the URL holds no userinfo.
 */
export function splitUrlCredentials(text: string): UrlCredentials | null {
  const match = USERINFO.exec(text);
  if (!match) return null;
  const userinfo = match[2]!;
  const colon = userinfo.indexOf(':');
  const user = colon < 0 ? userinfo : userinfo.slice(0, colon);
  const password = colon < 0 ? '' : userinfo.slice(colon + 1);
  return {
    url: match[1]! + text.slice(match[0].length),
    ...(user ? { username: decoded(user) } : {}),
    ...(password ? { password: decoded(password) } : {}),
  };
}
