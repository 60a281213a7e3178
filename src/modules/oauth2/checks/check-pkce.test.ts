import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { InvalidGrantError, InvalidRequestError } from '../oauth2-errors.js';
import {
  checkCodeVerifier,
  computeCodeChallenge,
  readPkceParameters,
  validateCodeChallenge,
  verifyCodeVerifier,
} from './check-pkce.js';

// RFC 7636 Appendix B.
const RFC_VERIFIER = 'dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk';
const RFC_CHALLENGE = 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM';

function invalidRequest(message: string | RegExp) {
  return (error: unknown) => {
    assert.ok(error instanceof InvalidRequestError);
    if (typeof message === 'string') assert.equal(error.description, message);
    else assert.match(error.description, message);
    return true;
  };
}

describe('validateCodeChallenge', () => {
  it('accepts an S256 challenge of 43 base64url characters', () => {
    assert.deepEqual(validateCodeChallenge(RFC_CHALLENGE, 'S256'), {
      codeChallenge: RFC_CHALLENGE,
      codeChallengeMethod: 'S256',
    });
  });

  it('refuses plain with the exact message', () => {
    assert.throws(
      () => validateCodeChallenge(RFC_VERIFIER, 'plain'),
      invalidRequest('code_challenge_method plain is not allowed'),
    );
  });

  it('refuses a missing method because it means plain (RFC 7636 section 4.3)', () => {
    assert.throws(() => validateCodeChallenge(RFC_CHALLENGE, undefined), invalidRequest(/means plain/));
    assert.throws(() => validateCodeChallenge(RFC_CHALLENGE, ''), invalidRequest(/means plain/));
  });

  it('refuses an unknown method, including a lower-case s256', () => {
    assert.throws(() => validateCodeChallenge(RFC_CHALLENGE, 's256'), invalidRequest(/not supported/));
    assert.throws(() => validateCodeChallenge(RFC_CHALLENGE, 'S512'), invalidRequest(/not supported/));
  });

  it('refuses a missing challenge', () => {
    assert.throws(
      () => validateCodeChallenge(undefined, 'S256'),
      invalidRequest('code_challenge is required'),
    );
  });

  it('refuses a challenge of 42 or 44 characters', () => {
    assert.throws(
      () => validateCodeChallenge(RFC_CHALLENGE.slice(1), 'S256'),
      invalidRequest(/43 base64url/),
    );
    assert.throws(() => validateCodeChallenge(`${RFC_CHALLENGE}A`, 'S256'), invalidRequest(/43 base64url/));
  });

  it('refuses a challenge with characters outside base64url', () => {
    const withPlus = `+${RFC_CHALLENGE.slice(1)}`;
    const withPadding = `${RFC_CHALLENGE.slice(0, 42)}=`;
    assert.throws(() => validateCodeChallenge(withPlus, 'S256'), invalidRequest(/43 base64url/));
    assert.throws(() => validateCodeChallenge(withPadding, 'S256'), invalidRequest(/43 base64url/));
  });

  it('refuses a 43-character value that no SHA-256 digest can produce (non-zero spare bits)', () => {
    // The last character of a 32-byte encoding carries 2 spare bits; "N" sets them.
    const nonCanonical = `${RFC_CHALLENGE.slice(0, 42)}N`;
    assert.throws(() => validateCodeChallenge(nonCanonical, 'S256'), invalidRequest(/43 base64url/));
  });
});

describe('readPkceParameters', () => {
  it('requires PKCE from a public client', () => {
    assert.throws(() => readPkceParameters({}, 'public'), invalidRequest(/required for public clients/));
  });

  it('returns null for a confidential client that sent no PKCE parameters', () => {
    assert.equal(readPkceParameters({}, 'confidential'), null);
  });

  it('validates PKCE parameters a confidential client chose to send', () => {
    assert.throws(
      () =>
        readPkceParameters({ codeChallenge: RFC_CHALLENGE, codeChallengeMethod: 'plain' }, 'confidential'),
      invalidRequest('code_challenge_method plain is not allowed'),
    );
  });

  it('refuses a method sent without a challenge', () => {
    assert.throws(
      () => readPkceParameters({ codeChallengeMethod: 'S256' }, 'confidential'),
      invalidRequest('code_challenge is required'),
    );
  });

  it('returns the challenge of a valid public-client request', () => {
    assert.deepEqual(
      readPkceParameters({ codeChallenge: RFC_CHALLENGE, codeChallengeMethod: 'S256' }, 'public'),
      {
        codeChallenge: RFC_CHALLENGE,
        codeChallengeMethod: 'S256',
      },
    );
  });
});

describe('verifyCodeVerifier', () => {
  it('computes the RFC 7636 Appendix B challenge from its verifier', () => {
    assert.equal(computeCodeChallenge(RFC_VERIFIER), RFC_CHALLENGE);
  });

  it('accepts the RFC 7636 Appendix B verifier for its challenge', () => {
    assert.equal(verifyCodeVerifier(RFC_VERIFIER, RFC_CHALLENGE), true);
  });

  it('refuses a verifier that differs by one character', () => {
    assert.equal(verifyCodeVerifier(`${RFC_VERIFIER.slice(0, -1)}j`, RFC_CHALLENGE), false);
  });

  it('refuses the challenge itself sent as the verifier (plain downgrade)', () => {
    assert.equal(verifyCodeVerifier(RFC_CHALLENGE, RFC_CHALLENGE), false);
  });

  it('refuses a verifier shorter than 43 characters even when its hash matches', () => {
    const short = 'a'.repeat(42);
    assert.equal(verifyCodeVerifier(short, computeCodeChallenge(short)), false);
  });

  it('accepts verifiers of 43 and 128 characters using every unreserved character', () => {
    const min = `${'A'.repeat(39)}-._~`;
    const max = `${'z0'.repeat(62)}-._~`;
    assert.equal(min.length, 43);
    assert.equal(max.length, 128);
    assert.equal(verifyCodeVerifier(min, computeCodeChallenge(min)), true);
    assert.equal(verifyCodeVerifier(max, computeCodeChallenge(max)), true);
  });

  it('refuses a verifier longer than 128 characters even when its hash matches', () => {
    const long = 'a'.repeat(129);
    assert.equal(verifyCodeVerifier(long, computeCodeChallenge(long)), false);
  });

  it('refuses a verifier with a character outside the unreserved set', () => {
    const withSpace = `${'a'.repeat(42)} `;
    const withPlus = `${'a'.repeat(42)}+`;
    assert.equal(verifyCodeVerifier(withSpace, computeCodeChallenge(withSpace)), false);
    assert.equal(verifyCodeVerifier(withPlus, computeCodeChallenge(withPlus)), false);
  });
});

describe('checkCodeVerifier', () => {
  const invalidGrant = (pattern: RegExp) => (error: unknown) => {
    assert.ok(error instanceof InvalidGrantError);
    assert.match(error.description, pattern);
    return true;
  };

  it('passes a matching verifier', () => {
    assert.doesNotThrow(() => checkCodeVerifier(RFC_CHALLENGE, RFC_VERIFIER));
  });

  it('passes when neither a challenge nor a verifier exists', () => {
    assert.doesNotThrow(() => checkCodeVerifier(null, undefined));
  });

  it('refuses a missing verifier when the code has a challenge', () => {
    assert.throws(() => checkCodeVerifier(RFC_CHALLENGE, undefined), invalidGrant(/required/));
  });

  it('refuses a wrong verifier with invalid_grant', () => {
    assert.throws(() => checkCodeVerifier(RFC_CHALLENGE, 'b'.repeat(43)), invalidGrant(/does not match/));
  });

  it('refuses a verifier for a code issued without a challenge', () => {
    assert.throws(() => checkCodeVerifier(null, RFC_VERIFIER), invalidGrant(/had no code_challenge/));
  });
});
