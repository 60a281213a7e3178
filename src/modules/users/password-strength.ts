import type { Match, ZxcvbnFactory } from '@zxcvbn-ts/core';

/**
 * The lowest zxcvbn score (0 to 4) a new password needs. 3 means zxcvbn estimates 10^8 guesses or more
 * ("safely unguessable" with a slow hash): passwords are kept as argon2id hashes and sign-ins are rate
 * limited, and 4 (10^10) would refuse two-word passphrases.
 */
export const PASSWORD_MIN_SCORE = 3;

/**
 * What the estimator reads of a password: the first 64 characters (a longer password is judged by its
 * start, conservatively: what follows can only add to its strength), and at most 10 l33t substitutions.
 * With zxcvbn's defaults (256 and 100) a password of 256 symbols it reads as l33t letters held the main
 * thread for seconds; with these about 100 ms on a loaded 2-core machine, a typical one 2 to 30 ms
 * (bench/users/password-strength.bench.ts).
 */
const ESTIMATOR_OPTIONS = { maxLength: 64, l33tMaxSubstitutions: 10 };

/** Words of this product a password should not lean on, beside the user's own. */
const SITE_WORDS = ['meridian'];

interface Estimator {
  zxcvbn: ZxcvbnFactory;
  /** zxcvbn's own warning for a password made of the user's data. */
  personalWarning: string;
}

let estimator: Promise<Estimator> | undefined;

/**
 * zxcvbn-ts with its common and English dictionaries and keyboard graphs, loaded on the first password
 * checked (they take about 0.4 s to load and decompress, which a start should not pay) and kept: it holds
 * read-only dictionaries and no state of any request.
 */
function loadEstimator(): Promise<Estimator> {
  estimator ??= (async () => {
    const [{ ZxcvbnFactory }, common, english] = await Promise.all([
      import('@zxcvbn-ts/core'),
      import('@zxcvbn-ts/language-common'),
      import('@zxcvbn-ts/language-en'),
    ]);
    const zxcvbn = new ZxcvbnFactory({
      ...ESTIMATOR_OPTIONS,
      translations: english.translations,
      graphs: common.adjacencyGraphs,
      dictionary: { ...common.dictionary, ...english.dictionary },
    });
    return { zxcvbn, personalWarning: english.translations.warnings.userInputs };
  })();
  return estimator;
}

/**
 * The words a password must not be built from: the e-mail address, its local part whole and in pieces
 * (`ada.lovelace` gives `ada` and `lovelace`), the domain's labels, and the display name whole and word
 * by word.
 */
export function userInputsOf(user: { email?: string | undefined; displayName?: string | undefined }) {
  const inputs = new Set<string>(SITE_WORDS);
  const add = (text: string) => {
    const word = text.trim().toLowerCase();
    if (word.length >= 3) inputs.add(word);
  };
  if (user.email) {
    const [local = '', domain = ''] = user.email.split('@');
    for (const text of [user.email, local, local.replace(/[._+-]/g, ''), ...local.split(/[._+-]/)]) add(text);
    for (const label of domain.split('.').slice(0, -1)) add(label);
  }
  if (user.displayName) {
    add(user.displayName);
    add(user.displayName.replace(/\s+/g, ''));
    for (const word of user.displayName.split(/\s+/)) add(word);
  }
  return [...inputs];
}

/**
 * Why zxcvbn judges a password too easy to guess, or null when it scores PASSWORD_MIN_SCORE or more:
 * its score and its own warning and suggestions, which say why (`This is similar to a commonly used
 * password`, `Straight rows of keys on your keyboard are easy to guess`). Also refused: a password half
 * or more of whose characters zxcvbn matched to `userInputs` (the user's e-mail and name). zxcvbn counts
 * each word of a password at 50 guesses at least and credits every further word with 10^4, so
 * `lovelace.ada@example` still reaches score 3 from three words an attacker knows.
 */
export async function describeWeakPassword(password: string, userInputs: string[]): Promise<string | null> {
  const { zxcvbn, personalWarning } = await loadEstimator();
  const result = zxcvbn.check(password, userInputs);
  if (result.score >= PASSWORD_MIN_SCORE) {
    const personal = personalCharacters(result.sequence);
    if (personal * 2 < [...password].length) return null;
    return `password is made mostly of your e-mail address or name: ${personalWarning}`;
  }
  const why = [result.feedback.warning, ...result.feedback.suggestions].filter(Boolean).join(' ');
  return (
    `password is too easy to guess (strength ${result.score} of 4, at least ${PASSWORD_MIN_SCORE} needed)` +
    (why ? `: ${why}` : '; use a longer phrase of words of your own')
  );
}

/** How many characters of the password zxcvbn matched to the user's own data. */
function personalCharacters(sequence: Match[]): number {
  let count = 0;
  for (const match of sequence) {
    if (match.pattern === 'dictionary' && match.dictionaryName === 'userInputs')
      count += [...match.token].length;
  }
  return count;
}
