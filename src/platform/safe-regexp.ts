// Linear-time regular expressions for patterns that users write (schema `pattern`, model constraints,
// pipeline conditions). JavaScript's RegExp backtracks: `^(a+)+$` against 30 characters blocks the event
// loop for seconds. RE2 (re2js, a pure-JavaScript port) matches in time linear in the input and refuses
// what cannot be matched that way (back-references, look-around).
import { RE2JS } from 're2js';

/** What Ajv needs of a RegExp engine (its `code.regExp` option). */
export interface SafeRegExp {
  test(input: string): boolean;
  /** The pattern and flags: Ajv keys its compiled patterns by this. */
  toString(): string;
}

export class UnsafePatternError extends Error {
  constructor(
    readonly pattern: string,
    reason: string,
  ) {
    super(`pattern ${JSON.stringify(pattern)} is not supported: ${reason}`);
  }
}

const cache = new Map<string, SafeRegExp>();
const CACHE_MAX = 1000;

/**
 * Compiles an ECMAScript-style pattern (as JSON Schema writes it) to a linear-time matcher. Throws
 * UnsafePatternError for syntax RE2 does not accept (back-references, look-ahead, look-behind).
 */
export function compileSafeRegExp(pattern: string, flags = ''): SafeRegExp {
  const key = `${flags}/${pattern}`;
  const cached = cache.get(key);
  if (cached) return cached;
  let re: RE2JS;
  try {
    re = RE2JS.compile(RE2JS.translateRegExp(pattern), flags.includes('i') ? RE2JS.CASE_INSENSITIVE : 0);
  } catch (error) {
    throw new UnsafePatternError(pattern, (error as Error).message);
  }
  // Ajv keys compiled patterns by `toString()`: without a distinct one, every pattern of an Ajv instance
  // would be matched by the first one it compiled.
  const compiled: SafeRegExp = {
    test: (input: string) => re.test(input),
    toString: () => `/${pattern}/${flags}`,
  };
  if (cache.size >= CACHE_MAX) cache.delete(cache.keys().next().value as string);
  cache.set(key, compiled);
  return compiled;
}

/** The engine to hand to Ajv: `new Ajv({ code: { regExp: safeRegExpEngine } })`. */
export const safeRegExpEngine = Object.assign(
  (pattern: string, flags: string) => compileSafeRegExp(pattern, flags),
  {
    code: 'safeRegExp',
  },
);
