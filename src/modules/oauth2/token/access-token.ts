import { type KeyObject, KeyObject as NodeKeyObject, randomUUID } from 'node:crypto';
import type { CryptoKey, JWTPayload } from 'jose';
import { decodeProtectedHeader, errors, jwtVerify } from 'jose';
import type { SigningKeyRing } from '../keys/signing-keys.js';
import { createSigningThread } from '../keys/signing-thread.js';
import { InvalidTokenError } from '../oauth2-errors.js';

/** Access tokens are ES256 only; no other algorithm is ever accepted for them. */
export const ACCESS_TOKEN_ALGORITHM = 'ES256';
/** RFC 9068 §2.1 media type, short form. */
export const ACCESS_TOKEN_TYPE = 'at+jwt';
/** Clock skew tolerated on exp, nbf and iat, in seconds. */
export const ACCESS_TOKEN_CLOCK_SKEW_SECONDS = 5;
// A JWT with the claims Meridian issues is well under 1 KiB; anything this large is not one of ours.
const MAX_TOKEN_LENGTH = 8192;

/** The claims of a Meridian access token (RFC 9068 §2.2). */
export interface AccessTokenClaims {
  iss: string;
  sub: string;
  client_id: string;
  scope: string;
  aud: string | string[];
  iat: number;
  exp: number;
  jti: string;
}

/** What the caller decides; iat, exp and jti are set by signAccessToken. */
export type AccessTokenSubject = Pick<AccessTokenClaims, 'iss' | 'sub' | 'client_id' | 'scope' | 'aud'>;

/**
 * Signs an RFC 9068 access token with the ring's active ES256 key. `jti` is random (a UUID);
 * returns the token and its claims so the caller can record jti and exp for revocation.
 */
export async function signAccessToken(
  ring: SigningKeyRing,
  claims: AccessTokenSubject,
  opts: { ttlSeconds: number; now?: Date | undefined },
): Promise<{ token: string; claims: AccessTokenClaims }> {
  if (!Number.isInteger(opts.ttlSeconds) || opts.ttlSeconds <= 0) {
    throw new TypeError('ttlSeconds must be a positive integer');
  }
  for (const name of ['iss', 'sub', 'client_id'] as const) {
    if (typeof claims[name] !== 'string' || claims[name] === '') throw new TypeError(`${name} is required`);
  }
  if (typeof claims.scope !== 'string') throw new TypeError('scope must be a string');
  const key = ring.getSigningKey(ACCESS_TOKEN_ALGORITHM);
  const iat = Math.floor((opts.now ?? new Date()).getTime() / 1000);
  const full: AccessTokenClaims = {
    iss: claims.iss,
    sub: claims.sub,
    client_id: claims.client_id,
    scope: claims.scope,
    aud: claims.aud,
    iat,
    exp: iat + opts.ttlSeconds,
    jti: randomUUID(),
  };
  // The event loop only hands the payload over; the signing thread encodes and signs what one turn produced.
  const token = await signingThread.signJws(
    encodedHeaderOf(key.kid),
    JSON.stringify(full),
    keyObjectOf(key.key),
  );
  return { token, claims: full };
}

// One per process; its thread starts on first use (see signing-thread.ts for why not libuv's pool).
const signingThread = createSigningThread();
const encodedHeaders = new Map<string, string>();

/** The protected header of an access token signed with key `kid`, base64url-encoded once per key. */
function encodedHeaderOf(kid: string): string {
  let header = encodedHeaders.get(kid);
  if (header === undefined) {
    header = Buffer.from(
      JSON.stringify({ alg: ACCESS_TOKEN_ALGORITHM, typ: ACCESS_TOKEN_TYPE, kid }),
    ).toString('base64url');
    // Key ids come only from the ring; a bound keeps a long-running process with many rotations small.
    if (encodedHeaders.size >= 64) encodedHeaders.clear();
    encodedHeaders.set(kid, header);
  }
  return header;
}

const keyObjects = new WeakMap<CryptoKey, KeyObject>();

/** The node:crypto KeyObject of a WebCrypto key, converted once per key. */
function keyObjectOf(key: CryptoKey): KeyObject {
  let keyObject = keyObjects.get(key);
  if (!keyObject) {
    keyObject = NodeKeyObject.from(key as unknown as Parameters<typeof NodeKeyObject.from>[0]);
    keyObjects.set(key, keyObject);
  }
  return keyObject;
}

/**
 * Verifies an access token against the ring: ES256 only, typ at+jwt (RFC 9068 §4), known kid,
 * signature, issuer, audience, exp / nbf / iat with 5 s of clock skew. Returns the claims or throws
 * InvalidTokenError whose `reason` says which check failed.
 */
export async function verifyAccessToken(
  ring: SigningKeyRing,
  token: string,
  options: { issuer: string; audience: string | string[]; now?: Date | undefined },
): Promise<AccessTokenClaims> {
  if (typeof token !== 'string' || token.length > MAX_TOKEN_LENGTH || token.split('.').length !== 3) {
    throw new InvalidTokenError('the access token is malformed', 'malformed');
  }
  let header: ReturnType<typeof decodeProtectedHeader>;
  try {
    header = decodeProtectedHeader(token);
  } catch {
    throw new InvalidTokenError('the access token is malformed', 'malformed');
  }
  // Decide the algorithm from our own policy, never from the token (RFC 8725 §3.1): this refuses
  // alg=none and HS256-with-the-public-key before any key is touched.
  if (header.alg !== ACCESS_TOKEN_ALGORITHM) {
    throw new InvalidTokenError(
      'the access token is not signed with an accepted algorithm',
      'wrong_algorithm',
    );
  }
  const key = typeof header.kid === 'string' ? ring.getVerificationKey(header.kid) : undefined;
  if (key === undefined)
    throw new InvalidTokenError('the access token was signed by an unknown key', 'unknown_key');
  if (key.alg !== ACCESS_TOKEN_ALGORITHM) {
    throw new InvalidTokenError(
      'the access token is not signed with an accepted algorithm',
      'wrong_algorithm',
    );
  }
  const now = options.now ?? new Date();
  let payload: JWTPayload;
  try {
    ({ payload } = await jwtVerify(token, key.key, {
      algorithms: [ACCESS_TOKEN_ALGORITHM],
      typ: ACCESS_TOKEN_TYPE,
      issuer: options.issuer,
      audience: options.audience,
      clockTolerance: ACCESS_TOKEN_CLOCK_SKEW_SECONDS,
      currentDate: now,
      requiredClaims: ['iss', 'sub', 'aud', 'exp', 'iat', 'jti', 'client_id'],
    }));
  } catch (error) {
    throw toInvalidTokenError(error);
  }
  return readClaims(payload, now);
}

function readClaims(payload: JWTPayload, now: Date): AccessTokenClaims {
  const { iss, sub, aud, iat, exp, jti } = payload;
  const clientId = payload.client_id;
  const scope = payload.scope ?? '';
  if (
    typeof iss !== 'string' ||
    typeof sub !== 'string' ||
    typeof clientId !== 'string' ||
    typeof scope !== 'string' ||
    typeof jti !== 'string' ||
    typeof iat !== 'number' ||
    typeof exp !== 'number' ||
    aud === undefined
  ) {
    throw new InvalidTokenError('the access token has a claim of the wrong type', 'malformed');
  }
  // jose checks iat only together with maxTokenAge; a token issued in the future is not ours.
  if (iat > now.getTime() / 1000 + ACCESS_TOKEN_CLOCK_SKEW_SECONDS) {
    throw new InvalidTokenError('the access token is not valid yet', 'not_yet_valid');
  }
  return { iss, sub, client_id: clientId, scope, aud, iat, exp, jti };
}

function toInvalidTokenError(error: unknown): InvalidTokenError {
  if (error instanceof errors.JWTExpired)
    return new InvalidTokenError('the access token has expired', 'expired');
  if (error instanceof errors.JWSSignatureVerificationFailed) {
    return new InvalidTokenError('the access token signature is invalid', 'bad_signature');
  }
  if (error instanceof errors.JWTClaimValidationFailed) {
    if (error.reason === 'missing') {
      return new InvalidTokenError('the access token is missing a required claim', 'missing_claim');
    }
    switch (error.claim) {
      case 'aud':
        return new InvalidTokenError('the access token is meant for another audience', 'wrong_audience');
      case 'iss':
        return new InvalidTokenError('the access token was issued by another issuer', 'wrong_issuer');
      case 'typ':
        return new InvalidTokenError('the token is not an access token (typ must be at+jwt)', 'wrong_type');
      case 'nbf':
        return new InvalidTokenError('the access token is not valid yet', 'not_yet_valid');
      default:
        return new InvalidTokenError('the access token is malformed', 'malformed');
    }
  }
  if (error instanceof errors.JOSEAlgNotAllowed) {
    return new InvalidTokenError(
      'the access token is not signed with an accepted algorithm',
      'wrong_algorithm',
    );
  }
  return new InvalidTokenError('the access token is malformed', 'malformed');
}
