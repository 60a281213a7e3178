import { describeJsonType, inputError } from '../uns-errors.js';

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

/** Unicode format characters (category Cf): zero-width, bidi overrides and isolates, soft hyphen, BOM. */
const FORMAT_CHARACTER = /\p{Cf}/u;

function hex(code: number): string {
  return `U+${code.toString(16).toUpperCase().padStart(4, '0')}`;
}

/**
 * Checks what topics and filters share and splits the text into segments. `wildcards` allows `+` and
 * `#` as whole segments (MQTT 3.1.1 §4.7.1), `#` only last. The first segment must equal `prefix`.
 * Messages start with `field`; the first problem met from left to right is reported.
 */
export function splitTopicText(text: unknown, prefix: string, field: string, wildcards: boolean): string[] {
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
  if (nonAscii) checkLookalikes(text, field);
  return segments;
}

/**
 * Refuses what makes a topic look like another: invisible format characters (category Cf: zero-width
 * space and joiners, bidi overrides and isolates, soft hyphen, BOM) and text not in Unicode
 * normalization form NFC (`e` + combining acute beside `é`). Refused rather than normalized, so that the
 * topic stored, relayed and answered is always the one the client sent.
 */
function checkLookalikes(text: string, field: string): void {
  const format = FORMAT_CHARACTER.exec(text);
  if (format) {
    const code = format[0].codePointAt(0)!;
    throw inputError(
      field,
      `must not contain invisible format characters (${hex(code)} at position ${format.index})`,
    );
  }
  if (text.normalize('NFC') !== text) {
    throw inputError(
      field,
      'must be in Unicode normalization form NFC (compose accents: "é", not "e" + U+0301)',
    );
  }
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
