import { badRequest } from '../../platform/errors.js';
import { COMMON_PASSWORDS } from './common-passwords.js';
import { describeWeakPassword, userInputsOf } from './password-strength.js';

/** The shortest password accepted (spec: at least 12 characters). */
export const PASSWORD_MIN_LENGTH = 12;

const COMMON = new Set(COMMON_PASSWORDS);
// Letter-for-digit swaps people make to pass composition rules ("P@ssw0rd").
const UNSWAPPED: Record<string, string> = {
  '0': 'o',
  '1': 'i',
  '3': 'e',
  '4': 'a',
  '5': 's',
  '7': 't',
  '@': 'a',
  $: 's',
  '!': 'i',
};

/** Whose password it is: what the password must not be built from. */
export interface PasswordOwner {
  email?: string | undefined;
  displayName?: string | undefined;
}

/**
 * Why a password is refused, or null when it is acceptable. First the rules with a message of their
 * own: shorter than 12 characters, whitespace only, one character repeated, a run such as `123456789012`,
 * the account's own e-mail address or name (letter for letter, digits and symbols around it aside), or a
 * common password (common-passwords.ts) with digits, symbols or repetitions around it. Then the strength
 * zxcvbn estimates, with the owner's e-mail and name among its words (password-strength.ts): keyboard
 * walks, words, names, dates, l33t and repetitions, refused below score 3 with zxcvbn's reason.
 */
export async function passwordProblem(password: string, owner: PasswordOwner = {}): Promise<string | null> {
  return passwordRuleProblem(password, owner) ?? describeWeakPassword(password, userInputsOf(owner));
}

function passwordRuleProblem(password: string, owner: PasswordOwner): string | null {
  const length = [...password].length;
  if (length < PASSWORD_MIN_LENGTH) return `password must be at least ${PASSWORD_MIN_LENGTH} characters`;
  if (password.trim() === '') return 'password must not be only spaces';
  const lower = password.toLowerCase();
  if (new Set(lower).size === 1) return 'password must not be one character repeated';
  if (isRun(lower)) return 'password must not be a run of consecutive characters such as 123456789012';
  if (owner.email !== undefined) {
    const address = owner.email.trim().toLowerCase();
    const local = address.split('@')[0] ?? '';
    if (lower.trim() === address || (local.length >= 4 && stem(lower) === stem(local))) {
      return 'password must not be your e-mail address';
    }
  }
  const name = stem((owner.displayName ?? '').toLowerCase());
  if (name.length >= 4 && stem(lower) === name) return 'password must not be your name';
  if (isCommon(lower)) return 'password is too common; choose a longer phrase of your own';
  return null;
}

/** Throws 400 naming the rule a password breaks, or why it is too easy to guess. */
export async function checkPassword(password: string, owner: PasswordOwner): Promise<void> {
  const problem = await passwordProblem(password, owner);
  if (problem) throw badRequest(problem);
}

/** Every step between neighbouring characters is the same +1 or -1 (abcd..., 4321..., wrapping 9 to 0). */
function isRun(text: string): boolean {
  const codes = [...text].map((c) => c.codePointAt(0)!);
  const step = (a: number, b: number) => (a === 57 && b === 48 ? 1 : a === 48 && b === 57 ? -1 : b - a);
  const first = step(codes[0]!, codes[1]!);
  if (first !== 1 && first !== -1) return false;
  for (let i = 2; i < codes.length; i++) if (step(codes[i - 1]!, codes[i]!) !== first) return false;
  return true;
}

/** Lower case, swaps undone, separators dropped, and trailing or leading digits and symbols removed. */
function stem(text: string): string {
  const trimmed = text.replace(/[\s._-]+/g, '').replace(/^[^a-z]+|[^a-z]+$/g, '');
  const letters = [...trimmed].map((c) => UNSWAPPED[c] ?? c).join('');
  return letters.replace(/^[^a-z]+|[^a-z]+$/g, '');
}

function isCommon(lower: string): boolean {
  const squeezed = lower.replace(/[\s._-]+/g, '');
  if (COMMON.has(squeezed) || isRepetitionOfCommon(squeezed)) return true;
  for (const candidate of [stem(lower), squeezed.replace(/[^a-z0-9]+$/, '').replace(/\d+$/, '')]) {
    if (candidate === '') continue;
    if (COMMON.has(candidate) || isRepetitionOfCommon(candidate)) return true;
  }
  return false;
}

/** `qwertyqwerty`, `passwordpassword1`: one common word (or any short unit) said again and again. */
function isRepetitionOfCommon(text: string): boolean {
  for (let unit = 1; unit <= text.length / 2; unit++) {
    if (text.length % unit !== 0) continue;
    const part = text.slice(0, unit);
    if (part.repeat(text.length / unit) === text && (unit <= 3 || COMMON.has(part))) return true;
  }
  return false;
}
