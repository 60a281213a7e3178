/**
 * Mixed-script detection for topic segments, after Unicode TR39 §5 (Mixed-Script Detection, Restriction
 * Level Detection) at the level "Moderately Restrictive", with the engine's own Unicode data
 * (`\p{Script_Extensions=...}`): no table is shipped, and none goes stale apart from Node's.
 */

/** ISO 15924 codes of every script up to Unicode 17 (an engine that does not know one skips it). */
const SCRIPT_CODES =
  `Adlm Aghb Ahom Arab Armi Armn Avst Bali Bamu Bass Batk Beng Berf Bhks Bopo Brah Brai Bugi Buhd
Cakm Cans Cari Cham Cher Chrs Copt Cpmn Cprt Cyrl Deva Diak Dogr Dsrt Dupl Egyp Elba Elym Ethi Gara Geor Glag
Gong Gonm Goth Gran Grek Gujr Gukh Guru Hang Hani Hano Hatr Hebr Hira Hluw Hmng Hmnp Hung Ital Java Kali Kana
Kawi Khar Khmr Khoj Kits Knda Krai Kthi Lana Laoo Latn Lepc Limb Lina Linb Lisu Lyci Lydi Mahj Maka Mand Mani
Marc Medf Mend Merc Mero Miao Mlym Modi Mong Mroo Mtei Mult Mymr Nagm Nand Narb Nbat Newa Nkoo Nshu Ogam Olck
Onao Orkh Orya Osge Osma Ougr Palm Pauc Perm Phag Phli Phlp Phnx Plrd Prti Rjng Rohg Runr Samr Sarb Saur Sgnw
Shaw Shrd Sidd Sidt Sind Sinh Sogd Sogo Sora Soyo Sund Sunu Sylo Syrc Tagb Takr Tale Talu Taml Tang Tavt Tayo
Telu Tfng Tglg Thaa Thai Tibt Tirh Tnsa Todr Tols Toto Tutg Ugar Vaii Vith Wara Wcho Xpeo Xsux Yezi Yiii Zanb
Zzzz`.split(/\s+/);

/** A test for each script the engine knows. */
const SCRIPTS: readonly { code: string; test: RegExp }[] = SCRIPT_CODES.flatMap((code) => {
  try {
    return [{ code, test: new RegExp(`\\p{Script_Extensions=${code}}`, 'u') }];
  } catch {
    return [];
  }
});

/** Characters whose Script_Extensions is Common or Inherited mix with any script (TR39 §5.1). */
const ANY_SCRIPT = /[\p{Script_Extensions=Zyyy}\p{Script_Extensions=Zinh}]/u;

/**
 * TR39 §5.1's augmentation: Han, Hiragana and Katakana are written together as Japanese (Jpan), Han and
 * Hangul as Korean (Kore), Han and Bopomofo as Han with Bopomofo (Hanb).
 */
const AUGMENTED: Record<string, readonly string[]> = {
  Hani: ['Hanb', 'Jpan', 'Kore'],
  Hira: ['Jpan'],
  Kana: ['Jpan'],
  Hang: ['Kore'],
  Bopo: ['Hanb'],
};

/** UAX #31 Table 5's Recommended scripts (and the augmented Japanese, Korean and Han with Bopomofo). */
const RECOMMENDED = new Set(
  `Arab Armn Beng Bopo Cyrl Deva Ethi Geor Grek Gujr Guru Hang Hani Hebr Hira Kana Knda Khmr Laoo Latn Mlym
Mymr Orya Sinh Taml Telu Thaa Thai Tibt Jpan Kore Hanb`.split(/\s+/),
);

/** Scripts that Moderately Restrictive never lets Latin mix with: their letters look like Latin ones. */
const LATIN_LOOKALIKES = new Set(['Cyrl', 'Grek']);

const LATIN: readonly string[] = ['Latn'];
const CACHE_LIMIT = 4096;
const scriptSets = new Map<number, readonly string[] | null>();
const names = new Intl.DisplayNames(['en'], { type: 'script' });

/** The augmented script set of a code point, or null when it mixes with any script (Common, Inherited). */
function scriptsOf(codePoint: number): readonly string[] | null {
  if (codePoint < 0x80) {
    const letter = (codePoint | 0x20) >= 0x61 && (codePoint | 0x20) <= 0x7a;
    return letter ? LATIN : null;
  }
  const cached = scriptSets.get(codePoint);
  if (cached !== undefined) return cached;
  const char = String.fromCodePoint(codePoint);
  let set: string[] | null = null;
  if (!ANY_SCRIPT.test(char)) {
    set = [];
    for (const { code, test } of SCRIPTS) {
      if (!test.test(char)) continue;
      set.push(code);
      for (const augmented of AUGMENTED[code] ?? []) if (!set.includes(augmented)) set.push(augmented);
    }
  }
  if (scriptSets.size >= CACHE_LIMIT) scriptSets.clear();
  scriptSets.set(codePoint, set);
  return set;
}

const intersect = (sets: readonly (readonly string[])[]) =>
  sets.reduce((common, set) => common.filter((code) => set.includes(code)));

/**
 * Why a topic segment mixes scripts in a way that makes it look like another, or null when it does not.
 * Allowed (TR39 §5.2, Moderately Restrictive): one script (its resolved script set is not empty; digits,
 * punctuation and combining marks go with any script); Latin with Han, Hiragana and Katakana, with Han and
 * Bopomofo, or with Han and Hangul; Latin with one other Recommended script except Cyrillic and Greek.
 * So `pump` with a Cyrillic `е` is refused, and `Line1_خط` or `Pumpe_ポンプ` are not.
 */
export function describeMixedScripts(segment: string): string | null {
  const sets: (readonly string[])[] = [];
  let nonAscii = false;
  for (const char of segment) {
    const codePoint = char.codePointAt(0)!;
    if (codePoint >= 0x80) nonAscii = true;
    const set = scriptsOf(codePoint);
    if (set) sets.push(set);
  }
  if (!nonAscii || sets.length === 0 || intersect(sets).length > 0) return null;
  const withoutLatin = sets.filter((set) => !set.includes('Latn'));
  const other = intersect(withoutLatin).filter((code) => RECOMMENDED.has(code));
  if (other.some((code) => !LATIN_LOOKALIKES.has(code))) return null;
  return `mixes ${listOf(mainScripts(sets))} (${JSON.stringify(segment)}); a segment is in one script, or mixes Latin with one other in common use except Cyrillic and Greek (Unicode TR39, Moderately Restrictive)`;
}

/** One script a character set stands for (Latin first), each named once, in the order met. */
function mainScripts(sets: readonly (readonly string[])[]): string[] {
  const seen: string[] = [];
  for (const set of sets) {
    const code = set.includes('Latn') ? 'Latn' : set[0]!;
    if (!seen.includes(code)) seen.push(code);
  }
  return seen.map((code) => names.of(code) ?? code);
}

function listOf(items: string[]): string {
  return items.length <= 2 ? items.join(' and ') : `${items.slice(0, -1).join(', ')} and ${items.at(-1)}`;
}
