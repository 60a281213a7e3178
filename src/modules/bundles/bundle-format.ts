import { createHash } from 'node:crypto';
import { configure } from 'safe-stable-stringify';
import { badRequest } from '../../platform/errors.js';
import type { EntityKinds } from '../graph/kinds/entity-kinds.js';
import type { BundleInput, PlanProblem } from '../graph/kinds/kind-exchange.js';

/** What every bundle says it is. */
export const BUNDLE_FORMAT = 'meridian.bundle';
/** The newest bundle format this server writes and reads. */
export const BUNDLE_FORMAT_VERSION = 1;
/** The media type of a downloaded bundle. */
export const BUNDLE_MEDIA_TYPE = 'application/vnd.meridian.bundle+json';

export type { BundleInput, BundleRef, PlanProblem } from '../graph/kinds/kind-exchange.js';

/**
 * The entities of a bundle, one member per kind (`folders`, `connections`, ...: `ExchangeAdapter.section`),
 * each a list of that kind's entities, or the one entity (or null) of a singleton kind (`settings`).
 * Each kind owns its entities' shape (its exchange adapter, beside its module).
 */
export type BundleEntities = Record<string, unknown>;

/** A versioned, checksummed configuration bundle (`.meridian.json`). */
export interface Bundle {
  format: typeof BUNDLE_FORMAT;
  formatVersion: number;
  meridian: string;
  exportedAt: string;
  description: string;
  /** What the target must support, filled by the kinds (`protocols`, `nodeTypes`). */
  requires: Record<string, string[]>;
  inputs: BundleInput[];
  entities: BundleEntities;
  /** `sha256:<hex>` of the canonical serialization of every other member. */
  checksum: string;
}

const canonicalJson = configure({ deterministic: true, circularValue: Error, bigint: false });

/** The canonical serialization: keys sorted at every depth, no white space. */
export function canonical(value: unknown): string {
  return canonicalJson(value) as string;
}

/** The checksum of a bundle: SHA-256 over the canonical serialization of everything but `checksum`. */
export function checksumOf(bundle: Omit<Bundle, 'checksum'> & { checksum?: unknown }): string {
  const { checksum: _, ...rest } = bundle;
  return `sha256:${createHash('sha256').update(canonical(rest)).digest('hex')}`;
}

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * Checks the outer shape of a bundle (400 naming the member at fault): each kind's section a list of
 * objects keyed `<type>:…` (a singleton kind's an object or null). The format version and the
 * checksum are the plan's problems, not errors: see `bundleProblems`.
 */
export function parseBundle(input: unknown, kinds: EntityKinds): Bundle {
  if (!isObject(input)) throw badRequest('bundle must be a JSON object');
  if (input.format !== BUNDLE_FORMAT) throw badRequest(`bundle.format must be "${BUNDLE_FORMAT}"`);
  if (!Number.isInteger(input.formatVersion) || (input.formatVersion as number) < 1)
    throw badRequest('bundle.formatVersion must be a positive integer');
  if (typeof input.checksum !== 'string') throw badRequest('bundle.checksum must be a string');
  // A newer format may be shaped otherwise: its members are not checked.
  if ((input.formatVersion as number) > BUNDLE_FORMAT_VERSION) return input as unknown as Bundle;
  if (!isObject(input.entities)) throw badRequest('bundle.entities must be an object');
  const entities = input.entities;
  for (const kind of kinds.all()) {
    if (!kind.exchange) continue;
    const { section, singleton } = kind.exchange;
    if (singleton) {
      if (entities[section] !== undefined && entities[section] !== null && !isObject(entities[section]))
        throw badRequest(`bundle.entities.${section} must be an object or null`);
      entities[section] ??= null;
      continue;
    }
    const items = entities[section] ?? [];
    if (!Array.isArray(items)) throw badRequest(`bundle.entities.${section} must be an array`);
    for (const [i, item] of items.entries()) {
      if (!isObject(item) || typeof item.key !== 'string' || !item.key.startsWith(`${kind.type}:`))
        throw badRequest(`bundle.entities.${section}[${i}] must be an object with a key "${kind.type}:…"`);
    }
    entities[section] = items;
  }
  if (!Array.isArray(input.inputs)) throw badRequest('bundle.inputs must be an array');
  if (!isObject(input.requires)) throw badRequest('bundle.requires must be an object');
  return input as unknown as Bundle;
}

/** Problems of the bundle as a whole: a newer format, a checksum that does not match its content. */
export function bundleProblems(bundle: Bundle): PlanProblem[] {
  if (bundle.formatVersion > BUNDLE_FORMAT_VERSION)
    return [
      {
        key: null,
        code: 'unsupported_format_version',
        message: `bundle format ${bundle.formatVersion} is newer than this server reads (${BUNDLE_FORMAT_VERSION})`,
      },
    ];
  if (checksumOf(bundle) !== bundle.checksum)
    return [
      {
        key: null,
        code: 'checksum_mismatch',
        message: 'checksum mismatch: the bundle was changed after it was exported',
      },
    ];
  return [];
}
