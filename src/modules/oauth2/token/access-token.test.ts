import assert from 'node:assert/strict';
import type { JsonWebKey } from 'node:crypto';
import { createPublicKey } from 'node:crypto';
import { before, describe, it } from 'node:test';
import type { CryptoKey, JWTHeaderParameters, JWTPayload } from 'jose';
import { decodeProtectedHeader, SignJWT } from 'jose';
import type { SigningKeyMaterial } from '../keys/signing-keys.js';
import { generateSigningKey, SigningKeyRing } from '../keys/signing-keys.js';
import type { InvalidTokenReason } from '../oauth2-errors.js';
import { InvalidTokenError } from '../oauth2-errors.js';
import type { AccessTokenSubject } from './access-token.js';
import { signAccessToken, verifyAccessToken } from './access-token.js';

const ISSUER = 'https://meridian.example.com';
const AUDIENCE = 'https://meridian.example.com/api/v1';
const NOW = new Date('2030-01-01T00:00:00Z');
const NOW_S = Math.floor(NOW.getTime() / 1000);
const SUBJECT: AccessTokenSubject = {
  iss: ISSUER,
  sub: 'usr_1',
  client_id: 'mrd_ci_abc',
  scope: 'openid uns:read',
  aud: AUDIENCE,
};
const verifyOptions = { issuer: ISSUER, audience: AUDIENCE, now: NOW };

let es: SigningKeyMaterial;
let rs: SigningKeyMaterial;
let ring: SigningKeyRing;
let esKey: CryptoKey;

before(async () => {
  [es, rs] = await Promise.all([generateSigningKey('ES256'), generateSigningKey('RS256')]);
  ring = await SigningKeyRing.create({ active: [es, rs] });
  esKey = ring.getSigningKey('ES256').key;
});

function b64(value: unknown): string {
  return Buffer.from(JSON.stringify(value)).toString('base64url');
}

function validPayload(overrides: JWTPayload = {}): JWTPayload {
  return { ...SUBJECT, iat: NOW_S, exp: NOW_S + 3600, jti: 'j1', ...overrides };
}

async function sign(
  payload: JWTPayload,
  header: Partial<JWTHeaderParameters> = {},
  key: CryptoKey | Uint8Array = esKey,
): Promise<string> {
  return new SignJWT(payload)
    .setProtectedHeader({ alg: 'ES256', typ: 'at+jwt', kid: es.kid, ...header })
    .sign(key);
}

async function refusedWith(
  token: string,
  reason: InvalidTokenReason,
  options = verifyOptions,
): Promise<void> {
  await assert.rejects(verifyAccessToken(ring, token, options), (error: unknown) => {
    assert.ok(error instanceof InvalidTokenError, String(error));
    assert.equal(error.reason, reason);
    assert.equal(error.status, 401);
    return true;
  });
}

describe('signAccessToken', () => {
  it('sets the RFC 9068 header: ES256, typ at+jwt, kid of the active key', async () => {
    const { token } = await signAccessToken(ring, SUBJECT, { ttlSeconds: 3600, now: NOW });
    assert.deepEqual(decodeProtectedHeader(token), { alg: 'ES256', typ: 'at+jwt', kid: es.kid });
  });

  it('returns claims with iat, exp from the ttl and a jti', async () => {
    const { claims } = await signAccessToken(ring, SUBJECT, { ttlSeconds: 3600, now: NOW });
    assert.deepEqual({ ...claims, jti: 'x' }, { ...SUBJECT, iat: NOW_S, exp: NOW_S + 3600, jti: 'x' });
    assert.match(claims.jti, /^[0-9a-f-]{36}$/);
  });

  it('gives every token a different jti', async () => {
    const a = await signAccessToken(ring, SUBJECT, { ttlSeconds: 60 });
    const b = await signAccessToken(ring, SUBJECT, { ttlSeconds: 60 });
    assert.notEqual(a.claims.jti, b.claims.jti);
  });

  it('refuses a ttl that is not a positive integer', async () => {
    await assert.rejects(signAccessToken(ring, SUBJECT, { ttlSeconds: 0 }), /positive integer/);
    await assert.rejects(signAccessToken(ring, SUBJECT, { ttlSeconds: 1.5 }), /positive integer/);
  });

  it('refuses an empty subject', async () => {
    await assert.rejects(
      signAccessToken(ring, { ...SUBJECT, sub: '' }, { ttlSeconds: 60 }),
      /sub is required/,
    );
  });
});

describe('verifyAccessToken', () => {
  it('round-trips a valid token', async () => {
    const { token, claims } = await signAccessToken(ring, SUBJECT, { ttlSeconds: 3600, now: NOW });
    assert.deepEqual(await verifyAccessToken(ring, token, verifyOptions), claims);
  });

  it('accepts a token signed by a retiring key', async () => {
    const { token } = await signAccessToken(ring, SUBJECT, { ttlSeconds: 3600, now: NOW });
    const newer = await generateSigningKey('ES256');
    const rotated = await SigningKeyRing.create({ active: [newer, rs], retiring: [es] });
    assert.equal((await verifyAccessToken(rotated, token, verifyOptions)).sub, 'usr_1');
  });

  it('accepts the application/at+jwt form of typ (RFC 9068 section 4)', async () => {
    const token = await sign(validPayload(), { typ: 'application/at+jwt' });
    assert.equal((await verifyAccessToken(ring, token, verifyOptions)).jti, 'j1');
  });

  it('accepts an audience list that contains the expected audience', async () => {
    const token = await sign(validPayload({ aud: ['other', AUDIENCE] }));
    assert.deepEqual((await verifyAccessToken(ring, token, verifyOptions)).aud, ['other', AUDIENCE]);
  });

  it('refuses an alg none token', async () => {
    const token = `${b64({ alg: 'none', typ: 'at+jwt', kid: es.kid })}.${b64(validPayload())}.`;
    await refusedWith(token, 'wrong_algorithm');
  });

  it('refuses an HS256 token keyed with the public JWK (key confusion)', async () => {
    const secret = new TextEncoder().encode(JSON.stringify(es.publicJwk));
    await refusedWith(await sign(validPayload(), { alg: 'HS256' }, secret), 'wrong_algorithm');
  });

  it('refuses an HS256 token keyed with the public key PEM (key confusion)', async () => {
    const pem = createPublicKey({ key: es.publicJwk as JsonWebKey, format: 'jwk' })
      .export({ type: 'spki', format: 'pem' })
      .toString();
    await refusedWith(
      await sign(validPayload(), { alg: 'HS256' }, new TextEncoder().encode(pem)),
      'wrong_algorithm',
    );
  });

  it("refuses an RS256 token signed with the ring's RSA key", async () => {
    const rsaKey = ring.getSigningKey('RS256').key;
    await refusedWith(await sign(validPayload(), { alg: 'RS256', kid: rs.kid }, rsaKey), 'wrong_algorithm');
  });

  it('refuses an ES256 header naming the RSA kid', async () => {
    await refusedWith(await sign(validPayload(), { kid: rs.kid }), 'wrong_algorithm');
  });

  it('refuses an expired token', async () => {
    await refusedWith(await sign(validPayload({ iat: NOW_S - 3700, exp: NOW_S - 100 })), 'expired');
  });

  it('tolerates 5 seconds of clock skew on exp and no more', async () => {
    const within = await sign(validPayload({ iat: NOW_S - 60, exp: NOW_S - 4 }));
    assert.equal((await verifyAccessToken(ring, within, verifyOptions)).jti, 'j1');
    await refusedWith(await sign(validPayload({ iat: NOW_S - 60, exp: NOW_S - 6 })), 'expired');
  });

  it('refuses a token meant for another audience', async () => {
    await refusedWith(await sign(validPayload({ aud: 'https://other.example.com' })), 'wrong_audience');
  });

  it('refuses a token from another issuer', async () => {
    await refusedWith(await sign(validPayload({ iss: 'https://evil.example.com' })), 'wrong_issuer');
  });

  it('refuses a token whose payload was tampered with', async () => {
    const { token } = await signAccessToken(ring, SUBJECT, { ttlSeconds: 3600, now: NOW });
    const [header, , signature] = token.split('.');
    const forged = `${header}.${b64(validPayload({ scope: 'system:admin' }))}.${signature}`;
    await refusedWith(forged, 'bad_signature');
  });

  it('refuses a token signed by a key the ring does not know', async () => {
    const stranger = await generateSigningKey('ES256');
    const strangerRing = await SigningKeyRing.create({ active: [stranger] });
    const { token } = await signAccessToken(strangerRing, SUBJECT, { ttlSeconds: 3600, now: NOW });
    await refusedWith(token, 'unknown_key');
  });

  it('refuses a token signed by another key under a known kid', async () => {
    const stranger = await generateSigningKey('ES256');
    const strangerRing = await SigningKeyRing.create({ active: [stranger] });
    await refusedWith(
      await sign(validPayload(), {}, strangerRing.getSigningKey('ES256').key),
      'bad_signature',
    );
  });

  it('refuses a token without kid', async () => {
    await refusedWith(await sign(validPayload(), { kid: undefined }), 'unknown_key');
  });

  it('refuses a token whose typ is not at+jwt (an ID token shape)', async () => {
    await refusedWith(await sign(validPayload(), { typ: 'JWT' }), 'wrong_type');
  });

  it('refuses a token without client_id', async () => {
    const { client_id: _, ...withoutClientId } = validPayload();
    await refusedWith(await sign(withoutClientId), 'missing_claim');
  });

  it('refuses a token without jti', async () => {
    const { jti: _, ...withoutJti } = validPayload();
    await refusedWith(await sign(withoutJti), 'missing_claim');
  });

  it('refuses a token issued in the future beyond the clock skew', async () => {
    await refusedWith(await sign(validPayload({ iat: NOW_S + 60, exp: NOW_S + 3660 })), 'not_yet_valid');
  });

  it('refuses a token whose nbf lies in the future', async () => {
    await refusedWith(await sign(validPayload({ nbf: NOW_S + 60 })), 'not_yet_valid');
  });

  it('refuses a scope claim that is not a string as malformed', async () => {
    await refusedWith(await sign(validPayload({ scope: ['uns:read'] })), 'malformed');
  });

  it('refuses malformed input', async () => {
    await refusedWith('not-a-jwt', 'malformed');
    await refusedWith('a.b.c', 'malformed');
    await refusedWith(`${b64({ alg: 'ES256' })}.${b64({})}.sig.extra`, 'malformed');
    await refusedWith('mrd_pat_0123456789', 'malformed');
  });

  it('refuses an oversized token', async () => {
    await refusedWith(await sign(validPayload({ pad: 'x'.repeat(9000) })), 'malformed');
  });
});
