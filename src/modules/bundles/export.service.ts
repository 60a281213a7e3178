import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Actor } from '../../platform/actor.js';
import type { Clock } from '../../platform/clock.js';
import { notFound } from '../../platform/errors.js';
import { isoTime } from '../../platform/schemas.js';
import type { Database, DependencyExportTable } from '../../storage/tables.js';
import { openSecrets } from '../connections/connections/secret-box.js';
import { protocolOf } from '../connections/protocols/protocol-registry.js';
import type { BundleRepository } from './bundle.repository.js';
import { BUNDLE_FORMAT_VERSION, type Bundle } from './bundle-format.js';
import type { EntityRef, EntityType } from './bundle-keys.js';
import { requireScopes } from './bundle-scopes.js';
import { readCatalog } from './catalog.repository.js';
import { analyzeSelection, buildBundle, type Selection } from './export-bundle.js';

/** How long a generated export can be downloaded. */
export const EXPORT_TTL_MS = 24 * 3_600_000;

export interface ExportRequest {
  select: Selection[];
  include?: Selection[] | undefined;
  description?: string | undefined;
}

/** An export as the API lists it (without its bundle). */
export function toExportSummary(row: Omit<DependencyExportTable, 'bundle' | 'organization_id'>) {
  return {
    id: row.id,
    status: 'ready' as const,
    description: row.description,
    formatVersion: Number(row.format_version),
    entityCount: Number(row.entity_count),
    size: Number(row.size),
    checksum: row.checksum,
    createdAt: isoTime(Number(row.created_at)),
    createdBy: row.created_by,
    expiresAt: isoTime(Number(row.expires_at)),
  };
}

/** Export: analyze a selection, generate a bundle (stored for download), list recent exports. */
export class ExportService {
  constructor(
    private readonly deps: {
      db: Kysely<Database>;
      repo: BundleRepository;
      clock: Clock;
      keyEncryptionKey: Buffer;
      meridianVersion: string;
    },
  ) {}

  /** What the selection requires and may include; needs the read scope of every type it would export. */
  async analyze(organizationId: string, granted: ReadonlySet<string>, request: ExportRequest) {
    const catalog = await readCatalog(this.deps.db, organizationId);
    const analysis = analyzeSelection(catalog, request.select, request.include);
    requireScopes(
      granted,
      [...analysis.selected, ...analysis.required].map((e) => e.type),
      'read',
    );
    return analysis;
  }

  /** Generates and stores the bundle of the selection, its requirements and the chosen optional entities. */
  async generate(organizationId: string, granted: ReadonlySet<string>, request: ExportRequest, actor: Actor) {
    const catalog = await readCatalog(this.deps.db, organizationId);
    const analysis = analyzeSelection(catalog, request.select, request.include);
    const exported = [...analysis.selected, ...analysis.required];
    const types = new Set<EntityType>(exported.map((e) => e.type));
    if (exported.some((e) => e.type === 'connection')) types.add('function');
    requireScopes(granted, types, 'read');
    const now = this.deps.clock.now();
    const kek = this.deps.keyEncryptionKey;
    const bundle = buildBundle(catalog, new Set(exported.map((e) => `${e.type}:${e.id}` as EntityRef)), {
      meridian: this.deps.meridianVersion,
      exportedAt: isoTime(now),
      description: request.description ?? '',
      // Only the names of the secrets that are set: their values never leave the secret box.
      secretFieldsOf: (connectionId) => {
        const row = catalog.connections.find((c) => c.id === connectionId)!;
        if (!row.secrets) return [];
        const set = Object.keys(openSecrets(row.secrets, row.id, kek));
        return protocolOf(row.protocol).secretFields.filter((f) => set.includes(f));
      },
    });
    const text = JSON.stringify(bundle, null, 2);
    const e = bundle.entities;
    const row: DependencyExportTable = {
      id: randomUUID(),
      organization_id: organizationId,
      description: request.description ?? '',
      format_version: BUNDLE_FORMAT_VERSION,
      entity_count:
        e.folders.length +
        e.connections.reduce((n, c) => n + 1 + c.functions.length, 0) +
        e.models.length +
        e.pipelines.length +
        e.dashboards.length +
        (e.settings ? 1 : 0),
      size: Buffer.byteLength(text),
      checksum: bundle.checksum,
      bundle: text,
      created_at: now,
      created_by: actor.userId,
      expires_at: now + EXPORT_TTL_MS,
    };
    await this.deps.repo.purge(now);
    await this.deps.repo.insertExport(row);
    return toExportSummary(row);
  }

  async list(organizationId: string) {
    return (await this.deps.repo.recentExports(organizationId, this.deps.clock.now())).map(toExportSummary);
  }

  /** The stored export, to download: needs the read scope of every type it holds. */
  async download(organizationId: string, granted: ReadonlySet<string>, id: string) {
    const row = await this.get(organizationId, id);
    const { entities } = JSON.parse(row.bundle) as Bundle;
    const types: EntityType[] = [];
    if (entities.connections.length) types.push('connection');
    if (entities.models.length) types.push('model');
    if (entities.pipelines.length) types.push('pipeline');
    if (entities.folders.length || entities.dashboards.length) types.push('dashboard');
    if (entities.settings) types.push('settings');
    requireScopes(granted, types, 'read');
    return row;
  }

  async get(organizationId: string, id: string) {
    const row = await this.deps.repo.findExport(organizationId, id, this.deps.clock.now());
    if (!row) throw notFound('export');
    return row;
  }
}
