import { inputError } from '../uns-errors.js';
import { splitTopicText } from './topic-text.js';

/** A validated topic filter, compiled once and matched many times. */
export interface TopicFilter {
  /** The filter as written, e.g. `v1/plant/+/temp`. */
  filter: string;
  /** Every segment, the prefix first; wildcards are the segments `+` and `#`. */
  segments: readonly string[];
  hasWildcards: boolean;
  /**
   * The literal segments before the first wildcard, each followed by `/` (`v1/plant/` for
   * `v1/plant/+/temp`). Every matching path starts with it, except `exactPath`.
   */
  literalPrefix: string;
  /**
   * The one path that can match without starting with `literalPrefix`: the filter itself when it has no
   * wildcard, the parent level `v1/a` of `v1/a/#` (MQTT 3.1.1 §4.7.1.2), otherwise null.
   */
  exactPath: string | null;
  /** Every path that starts with `literalPrefix` matches (the filter ends in its only wildcard, `#`). */
  coversPrefix: boolean;
  /** Whether a valid topic path matches the filter. */
  matches(path: string): boolean;
}

/**
 * Validates an MQTT-style topic filter (MQTT 3.1.1 §4.7) and compiles its matcher. `+` matches exactly
 * one non-empty segment and `#` any number of trailing segments, the parent level included; both only
 * as whole segments, `#` only last. Unlike MQTT, a filter must begin with the literal version prefix
 * (neither `+` nor `#` may stand for it, so one filter never spans prefixes) and have at least one
 * segment after it. Otherwise the topic rules hold (segment length, characters, depth, bytes).
 * Throws UnsInputError naming `field`. `lookalikes` false: for the lookup of an existing node only
 * (splitTopicText).
 */
export function parseTopicFilter(
  filter: unknown,
  prefix: string,
  field = 'filter',
  lookalikes = true,
): TopicFilter {
  const segments = splitTopicText(filter, prefix, field, true, lookalikes);
  if (segments.length < 2) {
    throw inputError(field, `must have at least one segment after the prefix (as in "${prefix}/#")`);
  }
  const text = filter as string;
  let literalCount = 0;
  while (literalCount < segments.length && !isWildcard(segments[literalCount]!)) literalCount++;
  const literalPrefix = `${segments.slice(0, literalCount).join('/')}/`;
  const hasWildcards = literalCount < segments.length;
  const trailingHashOnly = literalCount === segments.length - 1 && segments[literalCount] === '#';

  let exactPath: string | null = null;
  let matches: (path: string) => boolean;
  if (!hasWildcards) {
    exactPath = text;
    matches = (path) => path === text;
  } else if (trailingHashOnly) {
    const parent = literalPrefix.slice(0, -1);
    exactPath = parent;
    matches = (path) => path === parent || path.startsWith(literalPrefix);
  } else {
    matches = compileSegmentMatcher(segments);
  }
  return {
    filter: text,
    segments,
    hasWildcards,
    literalPrefix,
    exactPath,
    coversPrefix: trailingHashOnly,
    matches,
  };
}

function isWildcard(segment: string): boolean {
  return segment === '+' || segment === '#';
}

/** Walks the path segment by segment against the filter, without splitting or allocating. */
function compileSegmentMatcher(filterSegments: readonly string[]): (path: string) => boolean {
  const count = filterSegments.length;
  return (path) => {
    let start = 0;
    for (let i = 0; i < count; i++) {
      const segment = filterSegments[i]!;
      // `#` also matches the parent level, where the path has already ended.
      if (segment === '#') return true;
      if (start > path.length) return false;
      let end = path.indexOf('/', start);
      if (end === -1) end = path.length;
      if (segment === '+') {
        if (end === start) return false;
      } else if (end - start !== segment.length || !path.startsWith(segment, start)) {
        return false;
      }
      start = end + 1;
    }
    return start === path.length + 1;
  };
}

/**
 * Orders two filters by how specifically they address `path` (both must match it): compared segment
 * by segment from the left, a literal beats `+`, `+` beats `#`, and a filter that has ended beats `#`
 * (the exact parent level). Negative when `a` is more specific. Distinct matching filters never tie.
 */
export function compareFilterSpecificity(a: TopicFilter, b: TopicFilter): number {
  const length = Math.max(a.segments.length, b.segments.length);
  for (let i = 0; i < length; i++) {
    const rankA = segmentRank(a.segments[i]);
    const rankB = segmentRank(b.segments[i]);
    if (rankA !== rankB) return rankA - rankB;
  }
  return 0;
}

function segmentRank(segment: string | undefined): number {
  if (segment === undefined) return 0;
  if (segment === '+') return 2;
  if (segment === '#') return 3;
  return 1;
}
