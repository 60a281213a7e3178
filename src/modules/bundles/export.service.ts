import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Actor } from '../../platform/actor.js';
import type { Clock } from '../../platform/clock.js';
import { notFound } from '../../platform/errors.js';
import { isoTime } from '../../platform/schemas.js';
import type { Database, DependencyExportTable } from '../../storage/tables.js';
import type { EntityKinds } from '../graph/kinds/entity-kinds.js';
import type { BundleRepository } from './bundle.repository.js';
import { BUNDLE_FORMAT_VERSION, type Bundle } from './bundle-format.js';
import { indexCatalog } from './bundle-keys.js';
import { requireScopes, typesIn } from './bundle-scopes.js';
import { readCatalog } from './catalog.repository.js';
import { analyzeSelection, buildBundle, entityCount, type Selection } from './export-bundle.js';

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

/** What export and import are built with. */
export interface BundleDeps {
  db: Kysely<Database>;
  repo: BundleRepository;
  /** The entity kinds: each reads and writes its own section of a bundle. */
  kinds: EntityKinds;
  clock: Clock;
  /** Opens and seals the secrets of connections. */
  keyEncryptionKey: Buffer;
}

/** Export: analyze a selection, generate a bundle (stored for download), list recent exports. */
export class ExportService {
  constructor(private readonly deps: BundleDeps & { meridianVersion: string }) {}

  /**
   * The analysis of a selection in the organization as it is now (with the catalog it read); 403 unless
   * the caller has the read scope of every type it would export.
   */
  private async analysisOf(organizationId: string, granted: ReadonlySet<string>, request: ExportRequest) {
    const { kinds } = this.deps;
    const catalog = await readCatalog(this.deps.db, kinds, organizationId);
    const index = indexCatalog(catalog, kinds);
    const analysis = analyzeSelection(index, kinds, request.select, request.include);
    const exported = [...analysis.selected, ...analysis.required];
    requireScopes(
      kinds,
      granted,
      exported.map((e) => e.type),
      'read',
    );
    return { catalog, index, analysis, exported };
  }

  /** What the selection requires and may include; needs the read scope of every type it would export. */
  async analyze(organizationId: string, granted: ReadonlySet<string>, request: ExportRequest) {
    return (await this.analysisOf(organizationId, granted, request)).analysis;
  }

  /** Generates and stores the bundle of the selection, its requirements and the chosen optional entities. */
  async generate(organizationId: string, granted: ReadonlySet<string>, request: ExportRequest, actor: Actor) {
    const { kinds } = this.deps;
    const { catalog, index, exported } = await this.analysisOf(organizationId, granted, request);
    const now = this.deps.clock.now();
    const bundle = buildBundle(catalog, index, kinds, new Set(exported.map((e) => `${e.type}:${e.id}`)), {
      meridian: this.deps.meridianVersion,
      exportedAt: isoTime(now),
      description: request.description ?? '',
      keyEncryptionKey: this.deps.keyEncryptionKey,
    });
    const text = JSON.stringify(bundle, null, 2);
    const row: DependencyExportTable = {
      id: randomUUID(),
      organization_id: organizationId,
      description: request.description ?? '',
      format_version: BUNDLE_FORMAT_VERSION,
      entity_count: entityCount(bundle, kinds),
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
    const bundle = JSON.parse(row.bundle) as Bundle;
    requireScopes(this.deps.kinds, granted, typesIn(bundle, this.deps.kinds), 'read');
    return row;
  }

  async get(organizationId: string, id: string) {
    const row = await this.deps.repo.findExport(organizationId, id, this.deps.clock.now());
    if (!row) throw notFound('export');
    return row;
  }
}
