import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { before, describe, it } from 'node:test';
import { calculateJwkThumbprint, jwtVerify, SignJWT } from 'jose';
import type { SigningKeyMaterial } from './signing-keys.js';
import {
  buildJwks,
  decryptPrivateKey,
  encryptPrivateKey,
  generateSigningKey,
  PrivateKeyDecryptionError,
  SigningKeyRing,
} from './signing-keys.js';

let es: SigningKeyMaterial;
let rs: SigningKeyMaterial;
let esOld: SigningKeyMaterial;

before(async () => {
  [es, rs, esOld] = await Promise.all([
    generateSigningKey('ES256'),
    generateSigningKey('RS256'),
    generateSigningKey('ES256'),
  ]);
});

describe('generateSigningKey', () => {
  it('uses the RFC 7638 thumbprint of the public key as kid', async () => {
    assert.equal(es.kid, await calculateJwkThumbprint(es.publicJwk));
    assert.equal(rs.kid, await calculateJwkThumbprint(rs.publicJwk));
  });

  it('makes an EC P-256 public JWK with kid, alg and use and no private part', () => {
    assert.deepEqual(Object.keys(es.publicJwk).sort(), ['alg', 'crv', 'kid', 'kty', 'use', 'x', 'y']);
    assert.equal(es.publicJwk.kty, 'EC');
    assert.equal(es.publicJwk.crv, 'P-256');
    assert.equal(es.publicJwk.alg, 'ES256');
    assert.equal(es.publicJwk.use, 'sig');
  });

  it('makes an RSA public JWK with kid, alg and use and no private part', () => {
    assert.deepEqual(Object.keys(rs.publicJwk).sort(), ['alg', 'e', 'kid', 'kty', 'n', 'use']);
    assert.equal(rs.publicJwk.alg, 'RS256');
  });

  it('makes a private JWK carrying d and the kid', () => {
    assert.equal(typeof es.privateJwk.d, 'string');
    assert.equal(es.privateJwk.kid, es.kid);
    assert.equal(typeof rs.privateJwk.p, 'string');
  });

  it('makes a different key each time', () => {
    assert.notEqual(es.kid, esOld.kid);
  });
});

describe('encryptPrivateKey / decryptPrivateKey', () => {
  const kek = randomBytes(32);

  it('round-trips a private JWK', () => {
    const encrypted = encryptPrivateKey(es.privateJwk, kek);
    assert.deepEqual(decryptPrivateKey(encrypted, es.kid, kek), es.privateJwk);
  });

  it('produces v1.<iv>.<tag>.<ciphertext> without the key in clear', () => {
    const encrypted = encryptPrivateKey(es.privateJwk, kek);
    const parts = encrypted.split('.');
    assert.equal(parts.length, 4);
    assert.equal(parts[0], 'v1');
    assert.equal(Buffer.from(parts[1] ?? '', 'base64url').length, 12);
    assert.equal(Buffer.from(parts[2] ?? '', 'base64url').length, 16);
    assert.ok(!encrypted.includes(es.privateJwk.d ?? 'missing'));
  });

  it('uses a fresh IV for every encryption', () => {
    assert.notEqual(encryptPrivateKey(es.privateJwk, kek), encryptPrivateKey(es.privateJwk, kek));
  });

  it('throws with a wrong key encryption key', () => {
    const encrypted = encryptPrivateKey(es.privateJwk, kek);
    assert.throws(() => decryptPrivateKey(encrypted, es.kid, randomBytes(32)), PrivateKeyDecryptionError);
  });

  it('throws when the ciphertext is tampered with', () => {
    const [v, iv, tag, ciphertext] = encryptPrivateKey(es.privateJwk, kek).split('.');
    const bytes = Buffer.from(ciphertext ?? '', 'base64url');
    bytes[0] = (bytes[0] ?? 0) ^ 1;
    const tampered = [v, iv, tag, bytes.toString('base64url')].join('.');
    assert.throws(() => decryptPrivateKey(tampered, es.kid, kek), PrivateKeyDecryptionError);
  });

  it('throws when the tag is tampered with', () => {
    const [v, iv, tag, ciphertext] = encryptPrivateKey(es.privateJwk, kek).split('.');
    const bytes = Buffer.from(tag ?? '', 'base64url');
    bytes[15] = (bytes[15] ?? 0) ^ 1;
    const tampered = [v, iv, bytes.toString('base64url'), ciphertext].join('.');
    assert.throws(() => decryptPrivateKey(tampered, es.kid, kek), PrivateKeyDecryptionError);
  });

  it('throws when the ciphertext is presented under another kid', () => {
    const encrypted = encryptPrivateKey(es.privateJwk, kek);
    assert.throws(() => decryptPrivateKey(encrypted, esOld.kid, kek), PrivateKeyDecryptionError);
  });

  it('throws on an unknown format', () => {
    assert.throws(() => decryptPrivateKey('v2.a.b.c', es.kid, kek), PrivateKeyDecryptionError);
    assert.throws(() => decryptPrivateKey('garbage', es.kid, kek), PrivateKeyDecryptionError);
  });

  it('refuses a key encryption key that is not 32 bytes', () => {
    assert.throws(() => encryptPrivateKey(es.privateJwk, randomBytes(16)), /32 bytes/);
  });

  it('refuses a private JWK without kid', () => {
    const { kid: _, ...withoutKid } = es.privateJwk;
    assert.throws(() => encryptPrivateKey(withoutKid, kek), /kid/);
  });
});

describe('buildJwks', () => {
  it('wraps public JWKs in { keys }', () => {
    assert.deepEqual(buildJwks([es.publicJwk, rs.publicJwk]), { keys: [es.publicJwk, rs.publicJwk] });
  });

  it('refuses a JWK carrying private key material', () => {
    assert.throws(() => buildJwks([es.privateJwk]), /private key material/);
  });

  it('lists a kid only once', () => {
    assert.equal(buildJwks([es.publicJwk, es.publicJwk]).keys.length, 1);
  });
});

describe('SigningKeyRing', () => {
  it('returns the active key per algorithm', async () => {
    const ring = await SigningKeyRing.create({ active: [es, rs] });
    assert.equal(ring.getSigningKey('ES256').kid, es.kid);
    assert.equal(ring.getSigningKey('RS256').kid, rs.kid);
  });

  it('throws when no active key exists for an algorithm', async () => {
    const ring = await SigningKeyRing.create({ active: [es] });
    assert.throws(() => ring.getSigningKey('RS256'), /no active RS256 signing key/);
  });

  it('finds verification keys for active and retiring keys and nothing else', async () => {
    const ring = await SigningKeyRing.create({
      active: [es],
      retiring: [{ ...esOld, privateJwk: undefined }],
    });
    assert.equal(ring.getVerificationKey(es.kid)?.alg, 'ES256');
    assert.equal(ring.getVerificationKey(esOld.kid)?.kid, esOld.kid);
    assert.equal(ring.getVerificationKey(rs.kid), undefined);
  });

  it('never signs with a retiring key', async () => {
    const ring = await SigningKeyRing.create({ active: [rs], retiring: [esOld] });
    assert.throws(() => ring.getSigningKey('ES256'), /no active ES256/);
  });

  it('serves the public parts of active and retiring keys in its JWKS', async () => {
    const ring = await SigningKeyRing.create({ active: [es, rs], retiring: [esOld] });
    assert.deepEqual(ring.jwks(), { keys: [es.publicJwk, rs.publicJwk, esOld.publicJwk] });
    assert.ok(ring.jwks().keys.every((key) => key.d === undefined));
  });

  it('returns a frozen JWKS', async () => {
    const ring = await SigningKeyRing.create({ active: [es] });
    assert.ok(Object.isFrozen(ring.jwks()));
    assert.ok(Object.isFrozen(ring.jwks().keys[0]));
  });

  it('signs with a key that verifies against its public JWK', async () => {
    const ring = await SigningKeyRing.create({ active: [es] });
    const signing = ring.getSigningKey('ES256');
    const token = await new SignJWT({ a: 1 }).setProtectedHeader({ alg: 'ES256' }).sign(signing.key);
    const { payload } = await jwtVerify(token, es.publicJwk);
    assert.equal(payload.a, 1);
  });

  it('refuses two active keys for the same algorithm', async () => {
    await assert.rejects(SigningKeyRing.create({ active: [es, esOld] }), /more than one active ES256/);
  });

  it('refuses an active key without its private part', async () => {
    await assert.rejects(
      SigningKeyRing.create({ active: [{ ...es, privateJwk: undefined }] }),
      /has no private key/,
    );
  });

  it('refuses a kid that is not the thumbprint of the key', async () => {
    await assert.rejects(
      SigningKeyRing.create({ active: [{ ...es, kid: esOld.kid }] }),
      /kid is not the JWK thumbprint/,
    );
  });

  it('refuses a private key that does not belong to the public key', async () => {
    await assert.rejects(
      SigningKeyRing.create({ active: [{ ...es, privateJwk: { ...esOld.privateJwk, kid: es.kid } }] }),
      /does not belong/,
    );
  });

  it('refuses a key whose type does not fit its algorithm', async () => {
    await assert.rejects(SigningKeyRing.create({ active: [{ ...rs, alg: 'ES256' }] }), /not a key for ES256/);
  });

  it('refuses the same kid twice', async () => {
    await assert.rejects(SigningKeyRing.create({ active: [es], retiring: [es] }), /given twice/);
  });
});
