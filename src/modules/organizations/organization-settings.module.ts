import type { FastifyInstance } from 'fastify';
import type { Kysely } from 'kysely';
import type { Clock } from '../../platform/clock.js';
import type { InvalidationBus } from '../../platform/invalidation-bus.js';
import type { Database } from '../../storage/tables.js';
import type { AccessWatchDeps } from '../uns/live/live-access.js';
import { historyRoutes } from './history/history.routes.js';
import { logosRoutes } from './logos/logos.routes.js';
import { LogosService } from './logos/logos.service.js';
import { maintenanceRoutes } from './maintenance/maintenance.routes.js';
import { MaintenanceService } from './maintenance/maintenance.service.js';
import { settingsRoutes } from './settings/settings.routes.js';
import { documentOf, SettingsService } from './settings/settings.service.js';
import { SettingsStore } from './settings/settings-store.js';
import type { SettingsDocument } from './settings/settings-values.js';

declare module 'fastify' {
  interface FastifyInstance {
    /** Maintenance mode of each organization: what pipelines, schedules and webhooks ask (see README.md). */
    maintenance: MaintenanceService;
  }
}

export interface OrganizationSettingsModule {
  settings: SettingsService;
  maintenance: MaintenanceService;
  /** The organization's settings document, from each replica's cache. */
  documentOf(organizationId: string): Promise<SettingsDocument>;
  /** Told the organization whose settings changed (null: any may have), on every replica. */
  onChange(listener: (organizationId: string | null) => void): () => void;
}

/** How often each replica looks for maintenance whose end time has passed, to end and record it. */
const MAINTENANCE_SWEEP_MS = 5_000;

/**
 * Settings, maintenance mode, change history, audit log and logos under `/api/v1/organizations`.
 * Answers the services other areas use (pipelines ask `maintenance`).
 */
export async function installOrganizationSettings(
  app: FastifyInstance,
  deps: {
    db: Kysely<Database>;
    clock: Clock;
    bus: InvalidationBus;
    sweepMs?: number;
    /** Checks what a settings change refers to in other modules (the edge node's write targets). */
    checkReferences?: (organizationId: string, document: SettingsDocument) => Promise<void>;
    /** What the maintenance event stream re-checks its credential with. */
    access: Pick<AccessWatchDeps, 'bearerVerifiers' | 'sessionVerifier' | 'directory' | 'intervalMs'>;
  },
): Promise<OrganizationSettingsModule> {
  const { db, clock, bus } = deps;
  const store = new SettingsStore({ db, clock, bus });
  const settings = new SettingsService({ db, clock, store, checkReferences: deps.checkReferences });
  const maintenance = new MaintenanceService({ db, clock, store });
  app.decorate('maintenance', maintenance);
  maintenance.start(deps.sweepMs ?? MAINTENANCE_SWEEP_MS, (error) =>
    app.log.warn({ err: error }, 'maintenance: ending expired maintenance failed'),
  );
  app.addHook('onClose', async () => {
    maintenance.stop();
    store.close();
  });

  const prefix = '/api/v1/organizations';
  await app.register(settingsRoutes, { prefix: `${prefix}/settings`, settings });
  await app.register(maintenanceRoutes, {
    prefix: `${prefix}/settings`,
    maintenance,
    store,
    access: { ...deps.access, bus, clock },
  });
  await app.register(historyRoutes, { prefix, db });
  await app.register(logosRoutes, { prefix, logos: new LogosService({ db, clock }) });
  return {
    settings,
    maintenance,
    documentOf: async (organizationId) => documentOf(await store.get(organizationId)),
    onChange: (listener) => store.onChange(listener),
  };
}
