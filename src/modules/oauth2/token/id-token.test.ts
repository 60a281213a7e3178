import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { before, describe, it } from 'node:test';
import { createLocalJWKSet, decodeJwt, decodeProtectedHeader, jwtVerify } from 'jose';
import type { SigningKeyMaterial } from '../keys/signing-keys.js';
import { generateSigningKey, SigningKeyRing } from '../keys/signing-keys.js';
import { signAccessToken } from './access-token.js';
import { computeAtHash, signIdToken } from './id-token.js';

const ISSUER = 'https://meridian.example.com';
const CLIENT_ID = 'mrd_ci_webapp';
const NOW = new Date('2030-01-01T00:00:00Z');
const NOW_S = NOW.getTime() / 1000;

let rs: SigningKeyMaterial;
let ring: SigningKeyRing;

before(async () => {
  const [es, generated] = await Promise.all([generateSigningKey('ES256'), generateSigningKey('RS256')]);
  rs = generated;
  ring = await SigningKeyRing.create({ active: [es, rs] });
});

const base = { iss: ISSUER, sub: 'usr_1', aud: CLIENT_ID, auth_time: NOW_S - 30 };

describe('computeAtHash', () => {
  it('matches the OIDC Core Appendix A example (access token jHkWEd...)', () => {
    assert.equal(computeAtHash('jHkWEdUXMU1BwAsC4vtUsZwnNvTIxEl0z9K3vx5KF0Y'), '77QmUPtjPfzWtF2AnpK9RQ');
  });

  it('is the base64url of the left 16 bytes of SHA-256', () => {
    const token = 'eyJhbGciOiJFUzI1NiJ9.e30.sig';
    const expected = createHash('sha256').update(token).digest().subarray(0, 16).toString('base64url');
    assert.equal(computeAtHash(token), expected);
    assert.equal(computeAtHash(token).length, 22);
  });
});

describe('signIdToken', () => {
  it('uses RS256, typ JWT and the kid of the active RSA key', async () => {
    const token = await signIdToken(ring, base, 300, { now: NOW });
    assert.deepEqual(decodeProtectedHeader(token), { alg: 'RS256', kid: rs.kid, typ: 'JWT' });
  });

  it('is accepted by jose jwtVerify with the JWKS, issuer and client ID as audience', async () => {
    const token = await signIdToken(ring, { ...base, nonce: 'n-0S6_WzA2Mj' }, 300);
    const { payload } = await jwtVerify(token, createLocalJWKSet(ring.jwks()), {
      issuer: ISSUER,
      audience: CLIENT_ID,
      algorithms: ['RS256'],
    });
    assert.equal(payload.sub, 'usr_1');
    assert.equal(payload.nonce, 'n-0S6_WzA2Mj');
  });

  it('sets iat from the clock and exp from the ttl', async () => {
    const payload = decodeJwt(await signIdToken(ring, base, 300, { now: NOW }));
    assert.equal(payload.iat, NOW_S);
    assert.equal(payload.exp, NOW_S + 300);
    assert.equal(payload.auth_time, NOW_S - 30);
  });

  it('leaves out nonce and at_hash when not given', async () => {
    const payload = decodeJwt(await signIdToken(ring, { ...base, nonce: undefined }, 300));
    assert.equal('nonce' in payload, false);
    assert.equal('at_hash' in payload, false);
  });

  it('carries the at_hash of the access token issued with it', async () => {
    const { token: accessToken } = await signAccessToken(
      ring,
      { iss: ISSUER, sub: 'usr_1', client_id: CLIENT_ID, scope: 'openid', aud: ISSUER },
      { ttlSeconds: 3600 },
    );
    const payload = decodeJwt(await signIdToken(ring, { ...base, at_hash: computeAtHash(accessToken) }, 300));
    assert.equal(payload.at_hash, computeAtHash(accessToken));
  });

  it('carries extra profile claims', async () => {
    const payload = decodeJwt(
      await signIdToken(
        ring,
        { ...base, name: 'Ada Operator', email: 'ada@example.com', email_verified: true },
        300,
      ),
    );
    assert.equal(payload.name, 'Ada Operator');
    assert.equal(payload.email, 'ada@example.com');
    assert.equal(payload.email_verified, true);
  });

  it('refuses iat or exp from the caller', async () => {
    await assert.rejects(signIdToken(ring, { ...base, exp: 1 }, 300), /exp is set by signIdToken/);
  });

  it('refuses a missing audience', async () => {
    await assert.rejects(signIdToken(ring, { ...base, aud: '' }, 300), /aud is required/);
  });

  it('refuses a ring without an active RS256 key', async () => {
    const esOnly = await SigningKeyRing.create({ active: [await generateSigningKey('ES256')] });
    await assert.rejects(signIdToken(esOnly, base, 300), /no active RS256 signing key/);
  });
});
