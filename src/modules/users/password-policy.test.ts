import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { generatePassword } from '../bootstrap/bootstrap.service.js';
import { passwordProblem } from './password-policy.js';

const ADA = { email: 'ada.lovelace@example.com', displayName: 'Ada Lovelace' };

describe('password policy', () => {
  it('accepts passphrases and the passwords the README and the tests use', async () => {
    for (const password of [
      'correct-horse-battery',
      'analytical-engine',
      'admin-password-for-tests',
      'password-3fa9c01b2e7d',
      'ENzNaZchorH6DPy9vN4YYczq',
      'Tr0mb0ne-Harbour-42',
      '839201748291',
      'plant walnut sofa 41',
    ]) {
      assert.equal(await passwordProblem(password, ADA), null, password);
    }
  });

  it('accepts every generated password', async () => {
    for (let i = 0; i < 200; i++) {
      const password = generatePassword();
      assert.equal(await passwordProblem(password, ADA), null, password);
    }
  });

  it('refuses short, blank, repeated, sequential, own-e-mail, own-name and common passwords, naming the rule', async () => {
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
      assert.match((await passwordProblem(password, ADA)) ?? 'accepted', pattern, password);
    }
  });

  it("refuses what zxcvbn finds easy to guess, with zxcvbn's reason: keyboard walks, repeated words, the user's own e-mail and name", async () => {
    const cases: [string, RegExp][] = [
      [
        'qwertyuiopas',
        /^password is too easy to guess \(strength 1 of 4, at least 3 needed\): This is similar to a commonly used password\./,
      ],
      ['zxcvbnmasdfghjkl', /strength [0-2] of 4.*: This is similar to a commonly used password/],
      [
        "asdfghjkl;'zx",
        /: Straight rows of keys on your keyboard are easy to guess\. .*Use longer keyboard patterns/,
      ],
      ['1qaz2wsx3edc4rfv', /: This is a commonly used password/],
      [
        'plantplantplant',
        /strength [0-2] of 4.*: Repeated character patterns like "abcabcabc" are easy to guess\. .*Avoid repeated words and characters\./,
      ],
      [
        'lovelace.ada@example',
        /^password is made mostly of your e-mail address or name: There should not be any personal or page related data\.$/,
      ],
      ['LovelaceAda2024!', /made mostly of your e-mail address or name/],
    ];
    for (const [password, pattern] of cases) {
      assert.match((await passwordProblem(password, ADA)) ?? 'accepted', pattern, password);
    }
  });

  it("refuses a password that is the user's display name, whatever the e-mail", async () => {
    const grace = { email: 'g.h@example.com', displayName: 'Grace Hopper' };
    assert.match((await passwordProblem('GraceHopper1906', grace)) ?? 'accepted', /must not be your name/);
    assert.match(
      (await passwordProblem('hopper-grace-cobol', grace)) ?? 'accepted',
      /made mostly of your e-mail address or name/,
    );
    // The same words belong to nobody for another user.
    assert.equal(await passwordProblem('hopper-grace-cobol', ADA), null);
  });
});
