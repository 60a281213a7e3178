import { inputError } from '../uns-errors.js';
import { splitTopicText } from './topic-text.js';

/** Default topic version prefix (setting `MERIDIAN_UNS_TOPIC_PREFIX`). */
export const DEFAULT_TOPIC_PREFIX = 'v1';

/** A validated topic path. */
export interface TopicPath {
  /** The topic exactly as published, e.g. `v1/plant/line/temp`. */
  readonly path: string;
  /** Every segment, the version prefix first: `['v1', 'plant', 'line', 'temp']`. */
  readonly segments: readonly string[];
  /**
   * Every ancestor node from `<prefix>/<first>` down to the parent, outermost first:
   * `v1/a/b/c` gives `['v1/a', 'v1/a/b']`. The prefix is the root and not a node.
   */
  readonly parentPaths: readonly string[];
}

/**
 * Validates a published topic: a string `<prefix>/<segment>/<segment>[/...]` whose first segment is the
 * prefix (case-sensitive), at least two segments after it, each 1 to 128 characters without `+`, `#`
 * or control characters, at most 32 segments and 1024 UTF-8 bytes, valid Unicode in normalization form
 * NFC without format characters (zero-width, bidi overrides). Not normalized but refused: topics compare
 * code point by code point. Throws UnsInputError naming `field`.
 */
export function parseTopicPath(topic: unknown, prefix: string, field = 'topic'): TopicPath {
  const segments = splitTopicText(topic, prefix, field, false);
  if (segments.length < 3) {
    throw inputError(
      field,
      `must have at least two segments after the prefix (as in "${prefix}/plant/line")`,
    );
  }
  const path = topic as string;
  const parentPaths: string[] = [];
  let ancestor = segments[0]!;
  for (let i = 1; i < segments.length - 1; i++) {
    ancestor = `${ancestor}/${segments[i]}`;
    parentPaths.push(ancestor);
  }
  return { path, segments, parentPaths };
}

/** The parent node of a valid node path, or null for a top-level node (`v1/a`) whose parent is the root. */
export function parentOf(path: string): string | null {
  const last = path.lastIndexOf('/');
  if (last <= 0) return null;
  const parent = path.slice(0, last);
  return parent.includes('/') ? parent : null;
}

/** Depth of a valid node path below the root prefix: `v1/a` is 1, `v1/a/b` is 2. */
export function depthOf(path: string): number {
  let depth = 0;
  for (let i = path.indexOf('/'); i !== -1; i = path.indexOf('/', i + 1)) depth++;
  return depth;
}

/** The last segment of a valid node path: the node's name. */
export function nameOf(path: string): string {
  return path.slice(path.lastIndexOf('/') + 1);
}
