import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  generateOpaqueToken,
  hashOpaqueToken,
  isWellFormedOpaqueToken,
  TOKEN_PREFIX,
  timingSafeEqualString,
} from './opaque-token.js';

describe('opaque tokens', () => {
  it('carries its prefix and passes its own checksum', () => {
    const token = generateOpaqueToken(TOKEN_PREFIX.personalAccessToken);
    assert.match(token.value, /^mrd_pat_[0-9A-Za-z]{46}$/);
    assert.equal(isWellFormedOpaqueToken(token.value, TOKEN_PREFIX.personalAccessToken), true);
  });

  it('stores only the SHA-256 of the value', () => {
    const token = generateOpaqueToken(TOKEN_PREFIX.refreshToken);
    assert.equal(token.hash, hashOpaqueToken(token.value));
    assert.equal(token.hash.includes(token.value), false);
    assert.equal(token.hash.length, 43);
  });

  it('refuses a value with one character changed', () => {
    const { value } = generateOpaqueToken(TOKEN_PREFIX.session);
    const i = TOKEN_PREFIX.session.length + 5;
    const flipped = value.slice(0, i) + (value[i] === 'a' ? 'b' : 'a') + value.slice(i + 1);
    assert.equal(isWellFormedOpaqueToken(flipped, TOKEN_PREFIX.session), false);
  });

  it('refuses a value with another prefix or length', () => {
    const { value } = generateOpaqueToken(TOKEN_PREFIX.session);
    assert.equal(isWellFormedOpaqueToken(value, TOKEN_PREFIX.personalAccessToken), false);
    assert.equal(isWellFormedOpaqueToken(`${value}x`, TOKEN_PREFIX.session), false);
  });

  it('generates distinct values', () => {
    const values = new Set(
      Array.from({ length: 1000 }, () => generateOpaqueToken(TOKEN_PREFIX.session).value),
    );
    assert.equal(values.size, 1000);
  });

  it('compares strings for equality', () => {
    assert.equal(timingSafeEqualString('abc', 'abc'), true);
    assert.equal(timingSafeEqualString('abc', 'abd'), false);
    assert.equal(timingSafeEqualString('abc', 'abcd'), false);
  });
});
