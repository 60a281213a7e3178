import { createHash } from 'node:crypto';
import { configure } from 'safe-stable-stringify';
import { badRequest } from '../../platform/errors.js';

/** What every bundle says it is. */
export const BUNDLE_FORMAT = 'meridian.bundle';
/** The newest bundle format this server writes and reads. */
export const BUNDLE_FORMAT_VERSION = 1;
/** The media type of a downloaded bundle. */
export const BUNDLE_MEDIA_TYPE = 'application/vnd.meridian.bundle+json';

/** A reference inside a bundle: the key of another entity of the bundle (or of the target, when bound). */
export interface BundleRef {
  $ref: string | null;
}

/** A secret left out of the bundle: filled at import. */
export interface BundleInput {
  /** `secret:<entity key>:<path>`, e.g. `secret:connection:PLC 1:config.password`. */
  key: string;
  kind: 'secret';
  entity: string;
  path: string;
  description: string;
}

export interface BundleFunction {
  key: string;
  sourceId: string;
  name: string;
  description: string;
  type: string;
  config: unknown;
  parameters: unknown;
  uns: unknown;
}

export interface BundleConnection {
  key: string;
  sourceId: string;
  name: string;
  description: string;
  protocol: string;
  /** The protocol config without its secret fields (each is an input). */
  config: Record<string, unknown>;
  labels: string[];
  readOnly: boolean;
  autoStart: boolean;
  functions: BundleFunction[];
}

export interface BundleModel {
  key: string;
  sourceId: string;
  name: string;
  description: string | null;
  labels: string[];
  /** Model references are `{ $ref }` in place of `{ id, version }`. */
  fields: unknown[];
}

export interface BundlePipeline {
  key: string;
  sourceId: string;
  name: string;
  description: string | null;
  labels: Record<string, string>;
  enabled: boolean;
  settings: unknown;
  /** Entity parameters (connectionId, functionId, modelId, pipelineId) are `{ $ref }` unless dynamic. */
  nodes: { id: string; type: string; parameters?: Record<string, unknown> }[];
  edges: unknown[];
}

export interface BundleFolder {
  key: string;
  sourceId: string;
  name: string;
  parent: BundleRef;
}

export interface BundleDashboard {
  key: string;
  sourceId: string;
  title: string;
  description: string;
  folder: BundleRef;
  tags: string[];
  definition: Record<string, unknown>;
}

export interface BundleSettings {
  key: 'settings:organization';
  /** The settings document; `dashboards.defaultDashboardId` is a `{ $ref }`. */
  document: Record<string, unknown>;
}

export interface BundleEntities {
  folders: BundleFolder[];
  connections: BundleConnection[];
  models: BundleModel[];
  pipelines: BundlePipeline[];
  dashboards: BundleDashboard[];
  settings: BundleSettings | null;
}

/** A versioned, checksummed configuration bundle (`.meridian.json`). */
export interface Bundle {
  format: typeof BUNDLE_FORMAT;
  formatVersion: number;
  meridian: string;
  exportedAt: string;
  description: string;
  requires: { protocols: string[]; nodeTypes: string[] };
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

const ENTITY_LISTS = ['folders', 'connections', 'models', 'pipelines', 'dashboards'] as const;

/**
 * Checks the outer shape of a bundle (400 naming the member at fault). The format version and the
 * checksum are the plan's problems, not errors: see `bundleProblems`.
 */
export function parseBundle(input: unknown): Bundle {
  if (!isObject(input)) throw badRequest('bundle must be a JSON object');
  if (input.format !== BUNDLE_FORMAT) throw badRequest(`bundle.format must be "${BUNDLE_FORMAT}"`);
  if (!Number.isInteger(input.formatVersion) || (input.formatVersion as number) < 1)
    throw badRequest('bundle.formatVersion must be a positive integer');
  if (typeof input.checksum !== 'string') throw badRequest('bundle.checksum must be a string');
  // A newer format may be shaped otherwise: its members are not checked.
  if ((input.formatVersion as number) > BUNDLE_FORMAT_VERSION) return input as unknown as Bundle;
  if (!isObject(input.entities)) throw badRequest('bundle.entities must be an object');
  const entities = input.entities;
  for (const list of ENTITY_LISTS) {
    const items = entities[list] ?? [];
    if (!Array.isArray(items)) throw badRequest(`bundle.entities.${list} must be an array`);
    for (const [i, item] of items.entries()) {
      if (!isObject(item) || typeof item.key !== 'string' || !item.key.startsWith(`${list.slice(0, -1)}:`))
        throw badRequest(
          `bundle.entities.${list}[${i}] must be an object with a key "${list.slice(0, -1)}:…"`,
        );
    }
    entities[list] = items;
  }
  if (entities.settings !== undefined && entities.settings !== null && !isObject(entities.settings))
    throw badRequest('bundle.entities.settings must be an object or null');
  entities.settings ??= null;
  if (!Array.isArray(input.inputs)) throw badRequest('bundle.inputs must be an array');
  if (!isObject(input.requires)) throw badRequest('bundle.requires must be an object');
  return input as unknown as Bundle;
}

/** A problem that stops an import, with the entity it concerns (when one). */
export interface PlanProblem {
  key: string | null;
  code: string;
  message: string;
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
