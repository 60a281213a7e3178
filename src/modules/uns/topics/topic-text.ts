import { describeJsonType, inputError } from '../uns-errors.js';
import { describeMixedScripts } from './segment-scripts.js';

/** Most segments a topic or filter may have, the version prefix included. */
export const MAX_TOPIC_SEGMENTS = 32;
/** Most bytes a topic or filter may take as UTF-8. */
export const MAX_TOPIC_BYTES = 1024;
/** Most characters (Unicode code points) in one segment. */
export const MAX_SEGMENT_CHARS = 128;

const SLASH = 0x2f;
const PLUS = 0x2b;
const HASH = 0x23;

/** C0 controls (NUL included), DEL and the C1 controls. */
export function isControlCode(code: number): boolean {
  return code <= 0x1f || (code >= 0x7f && code <= 0x9f);
}

/**
 * Characters that are invisible or break a line, each group with its own reason: format characters
 * (category Cf: zero-width space U+200B, joiners U+200C-U+200D, bidi marks, embeddings, overrides and
 * isolates U+200E-U+200F, U+202A-U+202E, U+2066-U+2069, word joiner U+2060, soft hyphen, BOM U+FEFF, tags),
 * the line and paragraph separators U+2028 and U+2029 (a line break in JavaScript source and in JSON
 * embedded in it), spaces other than U+0020 (no-break, en, em, ideographic...), and the other default
 * ignorable code points (variation selectors, the combining grapheme joiner, Hangul fillers).
 */
const INVISIBLE = [
  [/\p{Cf}/u, 'invisible format characters'],
  [/[\p{Zl}\p{Zp}]/u, 'line or paragraph separators'],
  [/[^\P{Zs} ]/u, 'spaces other than U+0020'],
  [/\p{Default_Ignorable_Code_Point}/u, 'invisible characters'],
] as const;

function hex(code: number): string {
  return `U+${code.toString(16).toUpperCase().padStart(4, '0')}`;
}

/**
 * Checks what topics and filters share and splits the text into segments. `wildcards` allows `+` and
 * `#` as whole segments (MQTT 3.1.1 §4.7.1), `#` only last. The first segment must equal `prefix`.
 * `lookalikes` false skips checkLookalikes, for lookups of a node that exists (a topic stored before a
 * rule was added stays readable and deletable). Messages start with `field`; the first problem met from
 * left to right is reported.
 */
export function splitTopicText(
  text: unknown,
  prefix: string,
  field: string,
  wildcards: boolean,
  lookalikes = true,
): string[] {
  if (text === undefined) throw inputError(field, 'is required');
  if (typeof text !== 'string') throw inputError(field, `must be a string, not ${describeJsonType(text)}`);
  // Every UTF-16 unit takes at least one UTF-8 byte: refuse huge input before scanning it.
  if (text.length > MAX_TOPIC_BYTES) {
    throw inputError(field, `must be at most ${MAX_TOPIC_BYTES} bytes as UTF-8 (got ${text.length} or more)`);
  }
  if (text.length === 0) throw inputError(field, 'must not be empty');

  const segments: string[] = [];
  let bytes = 0;
  let segmentStart = 0;
  let segmentChars = 0;
  let segmentHasWildcard = false;
  let nonAscii = false;

  for (let i = 0; i <= text.length; i++) {
    const code = i < text.length ? text.charCodeAt(i) : SLASH;
    if (code === SLASH) {
      const segment = text.slice(segmentStart, i);
      const position = segments.length + 1;
      if (segmentChars === 0) {
        throw inputError(field, `must not contain an empty segment (leading, trailing or double "/")`);
      }
      if (segments.length === 0 && segment !== prefix) {
        throw inputError(
          field,
          `must start with the version prefix "${prefix}" (as in "${prefix}/plant/line")`,
        );
      }
      if (segmentChars > MAX_SEGMENT_CHARS) {
        throw inputError(
          field,
          `segment ${position} must be at most ${MAX_SEGMENT_CHARS} characters (got ${segmentChars})`,
        );
      }
      if (segmentHasWildcard && segment !== '+' && segment !== '#') {
        throw inputError(field, `segment ${position} must be "+" or "#" alone when it holds a wildcard`);
      }
      if (segments.length > 0 && segments[segments.length - 1] === '#') {
        throw inputError(field, 'may use "#" only as its last segment');
      }
      segments.push(segment);
      if (segments.length > MAX_TOPIC_SEGMENTS) {
        throw inputError(field, `must have at most ${MAX_TOPIC_SEGMENTS} segments including the prefix`);
      }
      if (i < text.length) bytes += 1;
      segmentStart = i + 1;
      segmentChars = 0;
      segmentHasWildcard = false;
      continue;
    }
    if (isControlCode(code)) {
      throw inputError(field, `must not contain control characters (${hex(code)} at position ${i})`);
    }
    if (code === PLUS || code === HASH) {
      if (!wildcards) throw inputError(field, 'must not contain the MQTT wildcards "+" or "#"');
      segmentHasWildcard = true;
    }
    if (code >= 0x80) nonAscii = true;
    if (code >= 0xd800 && code <= 0xdfff) {
      const next = text.charCodeAt(i + 1);
      const isPair = code <= 0xdbff && next >= 0xdc00 && next <= 0xdfff;
      if (!isPair) throw inputError(field, `must be valid Unicode (lone surrogate at position ${i})`);
      i++;
      bytes += 4;
    } else {
      bytes += code < 0x80 ? 1 : code < 0x800 ? 2 : 3;
    }
    segmentChars++;
  }

  if (bytes > MAX_TOPIC_BYTES) {
    throw inputError(field, `must be at most ${MAX_TOPIC_BYTES} bytes as UTF-8 (got ${bytes})`);
  }
  if (nonAscii && lookalikes) checkLookalikes(text, segments, field);
  return segments;
}

/**
 * Why `text` has characters that make it look like other text, or null: invisible and line-breaking
 * characters (INVISIBLE; the position counts UTF-16 units), or text not in Unicode normalization form NFC
 * (`e` + combining acute beside `é`). Refused rather than normalized, so that the topic stored, relayed
 * and answered is always the one the client sent.
 */
export function describeLookalikeText(text: string): string | null {
  for (const [pattern, what] of INVISIBLE) {
    const found = pattern.exec(text);
    if (found) {
      const code = found[0].codePointAt(0)!;
      return `must not contain ${what} (${hex(code)} at position ${found.index})`;
    }
  }
  if (text.normalize('NFC') !== text) {
    return 'must be in Unicode normalization form NFC (compose accents: "é", not "e" + U+0301)';
  }
  return null;
}

/**
 * What makes a topic or filter look like another, or null: what describeLookalikeText finds, and a
 * segment that mixes scripts as lookalikes do (a Cyrillic `е` in a Latin word; segment-scripts.ts),
 * numbered from 1 (the version prefix). The one check of topics and filters wherever they come from:
 * splitTopicText applies it, and the MQTT broker to subscription filters.
 */
export function describeTopicLookalikes(text: string, segments: readonly string[] = text.split('/')) {
  const problem = describeLookalikeText(text);
  if (problem) return problem;
  for (let i = 0; i < segments.length; i++) {
    const mixed = describeMixedScripts(segments[i]!);
    if (mixed) return `segment ${i + 1} ${mixed}`;
  }
  return null;
}

function checkLookalikes(text: string, segments: readonly string[], field: string): void {
  const problem = describeTopicLookalikes(text, segments);
  if (problem) throw inputError(field, problem);
}

/**
 * Describes what is wrong with a configured topic version prefix, or returns null when it is usable:
 * one segment of 1 to 128 characters without `/`, `+`, `#` or control characters, not starting with
 * `$` (MQTT 3.1.1 §4.7.2 reserves those topics for the broker).
 */
export function describeTopicPrefixProblem(prefix: string): string | null {
  if (prefix.length === 0) return 'the topic prefix must not be empty';
  if (prefix.startsWith('$')) return 'the topic prefix must not start with "$" (reserved by MQTT)';
  if (prefix.includes('/')) return 'the topic prefix must be one segment, without "/"';
  try {
    splitTopicText(prefix, prefix, 'the topic prefix', false);
  } catch (error) {
    return (error as Error).message;
  }
  return null;
}
