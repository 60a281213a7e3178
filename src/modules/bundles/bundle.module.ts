import type { FastifyInstance } from 'fastify';
import type { Config } from '../../config/config.schema.js';
import type { Clock } from '../../platform/clock.js';
import type { EntityEvents } from '../../platform/entity-events.js';
import type { InvalidationBus } from '../../platform/invalidation-bus.js';
import { resolveKeyEncryptionKey } from '../../platform/secrets/key-encryption-key.js';
import type { Storage } from '../../storage/database.js';
import type { DependencyEdges } from '../graph/edges/edges.repository.js';
import type { EntityKinds } from '../graph/kinds/entity-kinds.js';
import { SETTINGS_CHANGED } from '../organizations/settings/settings-store.js';
import type { EntityVersionsRepository } from '../versions/entity-versions.repository.js';
import { BundleRepository } from './bundle.repository.js';
import { bundleRoutes } from './bundle.routes.js';
import { ExportService } from './export.service.js';
import { ImportService } from './import.service.js';

/**
 * Installs export and import of configuration under `/api/v1/dependencies`. Needs connections (an
 * import started with `activate` tells their supervisor) and the organization settings.
 */
export async function installBundles(
  app: FastifyInstance,
  deps: {
    config: Config;
    storage: Storage;
    clock: Clock;
    bus: InvalidationBus;
    /** Every kind an import may have written is announced changed (the engine's triggers listen). */
    events: EntityEvents;
    versions: EntityVersionsRepository;
    edges: DependencyEdges;
    /** The entity kinds: each writes its section of a bundle. */
    kinds: EntityKinds;
    meridianVersion: string;
  },
): Promise<{ exports: ExportService; imports: ImportService }> {
  const { config, clock } = deps;
  const db = deps.storage.db;
  const repo = new BundleRepository(db);
  const keyEncryptionKey = resolveKeyEncryptionKey(config);
  const { kinds } = deps;
  const exports = new ExportService({
    db,
    repo,
    kinds,
    clock,
    keyEncryptionKey,
    meridianVersion: deps.meridianVersion,
  });
  const imports = new ImportService({
    db,
    repo,
    kinds,
    clock,
    keyEncryptionKey,
    topicPrefix: config.topicPrefix,
    versions: deps.versions,
    egress: app.connectors.egress,
    edges: deps.edges,
    imported: async (organizationId, effects) => {
      for (const id of effects.start) app.connectors.supervisor.changed(id);
      if (effects.settings) await deps.bus.publish({ topic: SETTINGS_CHANGED, id: organizationId });
      for (const kind of kinds.all())
        if (kind.exchange) await deps.events.changed({ type: kind.type, organizationId });
    },
  });
  await app.register(bundleRoutes, {
    prefix: '/api/v1/dependencies',
    exports,
    imports,
    bundleBodyLimit: config.batchBodyLimit,
  });
  return { exports, imports };
}
