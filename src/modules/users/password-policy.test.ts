import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { passwordProblem } from './password-policy.js';

describe('password policy', () => {
  it('accepts passphrases and the passwords the README and the tests use', () => {
    for (const password of [
      'correct-horse-battery',
      'analytical-engine',
      'admin-password-for-tests',
      'password-3fa9c01b2e7d',
      'ENzNaZchorH6DPy9vN4YYczq',
      'Tr0mb0ne-Harbour-42',
      '839201748291',
    ]) {
      assert.equal(passwordProblem(password, 'ada@example.com'), null, password);
    }
  });

  it('refuses short, blank, repeated, sequential, own-e-mail and common passwords, naming the rule', () => {
    const cases: [string, RegExp][] = [
      ['short-pass', /at least 12 characters/],
      [' '.repeat(12), /only spaces/],
      ['\t'.repeat(14), /only spaces/],
      ['aaaaaaaaaaaa', /one character repeated/],
      ['123456789012', /run of consecutive/],
      ['abcdefghijklm', /run of consecutive/],
      ['ada.lovelace@example.com', /e-mail address/],
      ['ADA.LOVELACE@EXAMPLE.COM', /e-mail address/],
      ['password1234', /too common/],
      ['P@ssw0rd1234!', /too common/],
      ['qwertyuiop123', /too common/],
      ['qwertyqwerty', /too common/],
      ['iloveyou!!!!', /too common/],
      ['letmein-letmein', /too common/],
      ['abcabcabcabc', /too common/],
      ['123123123123', /too common/],
      ['1q2w3e4r5t6y', /too common/],
      ['administrator', /too common/],
    ];
    for (const [password, pattern] of cases) {
      assert.match(passwordProblem(password, 'ada.lovelace@example.com') ?? 'accepted', pattern, password);
    }
  });
});
