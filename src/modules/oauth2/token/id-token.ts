import { createHash } from 'node:crypto';
import { SignJWT } from 'jose';
import type { SigningKeyRing } from '../keys/signing-keys.js';

/** ID tokens are RS256, the algorithm every OIDC relying party must support (OIDC Core §15.1). */
export const ID_TOKEN_ALGORITHM = 'RS256';

/** What the caller decides for an ID token; iat and exp come from the clock and the ttl. */
export interface IdTokenInput {
  iss: string;
  sub: string;
  /** The client ID of the relying party. */
  aud: string;
  /** Seconds since the epoch when the user authenticated (OIDC Core §2). */
  auth_time: number;
  nonce?: string | undefined;
  at_hash?: string | undefined;
  /** Profile and email claims (name, email, email_verified, ...). */
  [claim: string]: unknown;
}

// Set by signIdToken itself; a caller that passes them has a bug worth hearing about.
const COMPUTED_CLAIMS = ['iat', 'exp'] as const;

/**
 * Signs an OIDC ID token with the ring's active RS256 key, header `{ alg, kid, typ: 'JWT' }`.
 * `nonce` and `at_hash` are included only when given (OIDC Core §3.1.3.6, §3.1.3.7).
 */
export async function signIdToken(
  ring: SigningKeyRing,
  claims: IdTokenInput,
  ttlSeconds: number,
  opts: { now?: Date | undefined } = {},
): Promise<string> {
  if (!Number.isInteger(ttlSeconds) || ttlSeconds <= 0)
    throw new TypeError('ttlSeconds must be a positive integer');
  for (const name of COMPUTED_CLAIMS) {
    if (name in claims) throw new TypeError(`${name} is set by signIdToken and must not be given`);
  }
  for (const name of ['iss', 'sub', 'aud'] as const) {
    if (typeof claims[name] !== 'string' || claims[name] === '') throw new TypeError(`${name} is required`);
  }
  if (!Number.isInteger(claims.auth_time)) throw new TypeError('auth_time must be an integer (seconds)');
  const key = ring.getSigningKey(ID_TOKEN_ALGORITHM);
  const iat = Math.floor((opts.now ?? new Date()).getTime() / 1000);
  const payload: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(claims)) {
    if (value !== undefined) payload[name] = value;
  }
  payload.iat = iat;
  payload.exp = iat + ttlSeconds;
  return new SignJWT(payload)
    .setProtectedHeader({ alg: ID_TOKEN_ALGORITHM, kid: key.kid, typ: 'JWT' })
    .sign(key.key);
}

/**
 * at_hash for an RS256 (or any SHA-256 based) ID token: base64url of the left-most half of the
 * SHA-256 of the ASCII access token (OIDC Core §3.1.3.6).
 */
export function computeAtHash(accessToken: string): string {
  const digest = createHash('sha256').update(accessToken, 'ascii').digest();
  return digest.subarray(0, digest.length / 2).toString('base64url');
}
