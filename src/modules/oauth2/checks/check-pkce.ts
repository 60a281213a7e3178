import { createHash } from 'node:crypto';
import { timingSafeEqualString } from '../../../platform/opaque-token.js';
import { InvalidGrantError, InvalidRequestError } from '../oauth2-errors.js';

/** The only code_challenge_method Meridian accepts. */
export const PKCE_METHOD = 'S256';

/** What an authorization code remembers of the PKCE request. */
export interface PkceChallenge {
  codeChallenge: string;
  codeChallengeMethod: typeof PKCE_METHOD;
}

// RFC 7636 §4.2: BASE64URL(SHA256(verifier)) of a 32-byte digest is exactly 43 characters, no padding.
const CHALLENGE_PATTERN = /^[A-Za-z0-9_-]{43}$/;
// RFC 7636 §4.1: code-verifier = 43*128unreserved, unreserved = ALPHA / DIGIT / "-" / "." / "_" / "~".
const VERIFIER_PATTERN = /^[A-Za-z0-9._~-]{43,128}$/;

/**
 * Checks the code_challenge and code_challenge_method of an authorization request.
 * Throws invalid_request unless the method is S256 and the challenge a well-formed S256 value.
 */
export function validateCodeChallenge(
  challenge: string | null | undefined,
  method: string | null | undefined,
): PkceChallenge {
  if (challenge === undefined || challenge === null || challenge === '') {
    throw new InvalidRequestError('code_challenge is required');
  }
  if (method === undefined || method === null || method === '') {
    // RFC 7636 §4.3: an absent method defaults to "plain", which Meridian refuses.
    throw new InvalidRequestError(
      'code_challenge_method is missing, which means plain; plain is not allowed, use S256',
    );
  }
  if (method === 'plain') throw new InvalidRequestError('code_challenge_method plain is not allowed');
  if (method !== PKCE_METHOD) {
    throw new InvalidRequestError('code_challenge_method is not supported, use S256');
  }
  if (!CHALLENGE_PATTERN.test(challenge) || !isCanonicalBase64url(challenge)) {
    throw new InvalidRequestError(
      'code_challenge must be 43 base64url characters (S256 of the code_verifier)',
    );
  }
  return { codeChallenge: challenge, codeChallengeMethod: PKCE_METHOD };
}

/**
 * Reads the PKCE parameters of an authorization request for a client of the given type.
 * Public clients must send them; for confidential clients they are optional (null when absent).
 */
export function readPkceParameters(
  params: { codeChallenge?: string | null | undefined; codeChallengeMethod?: string | null | undefined },
  clientType: 'confidential' | 'public',
): PkceChallenge | null {
  const absent = (value: string | null | undefined) => value === undefined || value === null || value === '';
  if (absent(params.codeChallenge) && absent(params.codeChallengeMethod)) {
    if (clientType === 'public') {
      throw new InvalidRequestError('code_challenge is required for public clients (PKCE, RFC 7636)');
    }
    return null;
  }
  return validateCodeChallenge(params.codeChallenge, params.codeChallengeMethod);
}

/** True when `verifier` is syntactically valid and its S256 transform equals `challenge`. */
export function verifyCodeVerifier(verifier: string, challenge: string): boolean {
  if (typeof verifier !== 'string' || !VERIFIER_PATTERN.test(verifier)) return false;
  return timingSafeEqualString(computeCodeChallenge(verifier), challenge);
}

/**
 * Token endpoint rule for the code_verifier (RFC 7636 §4.6). Throws invalid_grant when the code was
 * issued with a challenge and the verifier is missing or wrong, and when a verifier is sent for a code
 * issued without a challenge (a PKCE downgrade, RFC 9700 §4.8.2).
 */
export function checkCodeVerifier(challengeOnCode: string | null, verifier: string | null | undefined): void {
  const hasVerifier = verifier !== undefined && verifier !== null && verifier !== '';
  if (challengeOnCode === null) {
    if (hasVerifier) {
      throw new InvalidGrantError(
        'code_verifier was sent but the authorization request had no code_challenge',
      );
    }
    return;
  }
  if (!hasVerifier) throw new InvalidGrantError('code_verifier is required');
  if (!verifyCodeVerifier(verifier, challengeOnCode)) {
    throw new InvalidGrantError('code_verifier does not match the code_challenge');
  }
}

/** BASE64URL(SHA256(ASCII(verifier))), RFC 7636 §4.2. */
export function computeCodeChallenge(verifier: string): string {
  return createHash('sha256').update(verifier, 'ascii').digest('base64url');
}

// 43 characters carry 258 bits for a 256-bit digest; the spare low bits of the last one must be zero.
function isCanonicalBase64url(value: string): boolean {
  return Buffer.from(value, 'base64url').toString('base64url') === value;
}
