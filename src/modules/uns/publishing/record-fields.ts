import { isControlCode } from '../topics/topic-text.js';
import { describeJsonType, inputError, isPlainObject, quoteInput } from '../uns-errors.js';

/** Most bytes a value may take as JSON text (UTF-8). */
export const MAX_VALUE_JSON_BYTES = 64 * 1024;
/** Deepest nesting of objects and arrays inside a value (the value itself is level 1). */
export const MAX_VALUE_DEPTH = 64;
/** Longest `source`, in characters (code points). */
export const MAX_SOURCE_CHARS = 255;

/** A publishable value: number, string, boolean or JSON object (never null or an array at the top). */
export type UnsValue = number | string | boolean | { [key: string]: unknown };
export type UnsValueType = 'number' | 'string' | 'boolean' | 'object';
/** 0 good, 1 uncertain, 2 bad. */
export type Quality = 0 | 1 | 2;

export interface ParsedValue {
  value: UnsValue;
  valueType: UnsValueType;
  /** The value as JSON text, what storage keeps; at most MAX_VALUE_JSON_BYTES bytes. */
  valueJson: string;
}

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
const ALLOWED = 'publish a number, string, boolean or JSON object';

/** Why a string cannot be stored as JSON text by every dialect, or null. PostgreSQL refuses both. */
function stringProblem(text: string): string | null {
  if (text.includes('\u0000')) return 'the NUL character (U+0000)';
  if (LONE_SURROGATE.test(text)) return 'invalid Unicode (a lone surrogate)';
  return null;
}

/** Finds the first part of a nested value that is not storable JSON; returns [path, problem] or null. */
function findNestedProblem(value: unknown, depth: number): [string, string] | null {
  if (typeof value === 'string') {
    const problem = stringProblem(value);
    return problem === null ? null : ['', `a string with ${problem}`];
  }
  if (typeof value === 'number') return Number.isFinite(value) ? null : ['', 'a number that is not finite'];
  if (typeof value === 'boolean' || value === null) return null;
  const isArray = Array.isArray(value);
  if (!isArray && !isPlainObject(value)) return ['', `something that is not JSON (${typeof value})`];
  if (depth > MAX_VALUE_DEPTH) return ['', `nesting deeper than ${MAX_VALUE_DEPTH} levels`];
  const entries: [string, unknown][] = isArray ? value.map((v, i) => [String(i), v]) : Object.entries(value);
  for (const [key, child] of entries) {
    const step = isArray ? `[${key}]` : `.${quoteInput(key)}`;
    if (!isArray) {
      const problem = stringProblem(key);
      if (problem !== null) return [step, `a member name with ${problem}`];
    }
    const found = findNestedProblem(child, depth + 1);
    if (found !== null) return [step + found[0], found[1]];
  }
  return null;
}

/**
 * Validates a published value: a finite number, a string, a boolean or a JSON object; null and arrays
 * are refused at the top (arrays inside an object are fine). Strings and member names must not hold
 * NUL or lone surrogates (PostgreSQL cannot store them), nesting is at most 64 levels and the JSON text
 * at most 64 KiB. Throws UnsInputError naming `field`.
 */
export function parseValue(value: unknown, field = 'value'): ParsedValue {
  if (value === undefined) throw inputError(field, `is required; ${ALLOWED}`);
  if (value === null) throw inputError(field, `must not be null; ${ALLOWED}`);
  if (Array.isArray(value))
    throw inputError(field, `must not be an array; ${ALLOWED} (wrap a list in an object)`);
  let valueType: UnsValueType;
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw inputError(field, 'must be a finite number');
    // The JSON of a finite number is a few ASCII characters: nothing inside to check, never too large.
    return { value, valueType: 'number', valueJson: JSON.stringify(value) };
  } else if (typeof value === 'string') {
    // JSON text is at least two quotes longer than the string: refuse huge strings before copying them.
    if (value.length > MAX_VALUE_JSON_BYTES) throw tooLarge(field, value.length);
    valueType = 'string';
  } else if (typeof value === 'boolean') {
    valueType = 'boolean';
  } else if (isPlainObject(value)) {
    valueType = 'object';
  } else {
    throw inputError(
      field,
      `must be a number, string, boolean or JSON object, not ${describeJsonType(value)}`,
    );
  }
  const found = findNestedProblem(value, 1);
  if (found !== null) {
    const where = found[0] === '' ? '' : ` at ${field}${found[0]}`;
    throw inputError(field, `must not contain ${found[1]}${where}`);
  }
  const valueJson = JSON.stringify(value);
  const bytes = Buffer.byteLength(valueJson, 'utf8');
  if (bytes > MAX_VALUE_JSON_BYTES) throw tooLarge(field, bytes);
  return { value: value as UnsValue, valueType, valueJson };
}

function tooLarge(field: string, size: number) {
  return inputError(field, `must be at most ${MAX_VALUE_JSON_BYTES} bytes as JSON (got ${size} or more)`);
}

/**
 * Validates the optional `source`: absent gives null; otherwise a string of 1 to 255 characters
 * without control characters or lone surrogates. An explicit null is refused (omit the member instead).
 */
export function parseSource(source: unknown, field = 'source'): string | null {
  if (source === undefined) return null;
  if (typeof source !== 'string') {
    throw inputError(
      field,
      `must be a string when present (omit it otherwise), not ${describeJsonType(source)}`,
    );
  }
  if (source.length === 0) throw inputError(field, 'must not be empty');
  // A code point takes at most two UTF-16 units: longer text is too long whatever it holds.
  if (source.length > MAX_SOURCE_CHARS * 2) {
    throw inputError(
      field,
      `must be at most ${MAX_SOURCE_CHARS} characters (got ${Math.ceil(source.length / 2)} or more)`,
    );
  }
  let chars = 0;
  for (const char of source) {
    const code = char.codePointAt(0)!;
    if (isControlCode(code)) throw inputError(field, 'must not contain control characters');
    if (code >= 0xd800 && code <= 0xdfff) throw inputError(field, 'must be valid Unicode (lone surrogate)');
    chars++;
  }
  if (chars > MAX_SOURCE_CHARS)
    throw inputError(field, `must be at most ${MAX_SOURCE_CHARS} characters (got ${chars})`);
  return source;
}

/**
 * Validates the optional `quality`: absent gives 0 (good); otherwise exactly the JSON integer 0, 1 or
 * 2. Strings, booleans, null, fractions and other numbers are refused, never coerced.
 */
export function parseQuality(quality: unknown, field = 'quality'): Quality {
  if (quality === undefined) return 0;
  if (quality === 0 || quality === 1 || quality === 2) return (quality === 0 ? 0 : quality) as Quality;
  const got = typeof quality === 'number' ? String(quality) : describeJsonType(quality);
  throw inputError(field, `must be the integer 0 (good), 1 (uncertain) or 2 (bad), not ${got}`);
}
