import type { FastifyInstance } from 'fastify';
import type { Kysely } from 'kysely';
import type { Clock } from '../../platform/clock.js';
import type { InvalidationBus } from '../../platform/invalidation-bus.js';
import type { Database } from '../../storage/tables.js';
import { organizationsRoutes } from './organizations.routes.js';
import { OrganizationsService } from './organizations.service.js';

/** Installs organizations and their members under `/api/v1/organizations` (settings: organization-settings.module.ts). */
export async function installOrganizations(
  app: FastifyInstance,
  deps: { db: Kysely<Database>; clock: Clock; bus: InvalidationBus },
): Promise<void> {
  await app.register(organizationsRoutes, {
    prefix: '/api/v1/organizations',
    organizations: new OrganizationsService(deps),
  });
}
