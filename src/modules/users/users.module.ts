import type { FastifyInstance } from 'fastify';
import type { Kysely } from 'kysely';
import type { Clock } from '../../platform/clock.js';
import type { InvalidationBus } from '../../platform/invalidation-bus.js';
import type { Database } from '../../storage/tables.js';
import { usersRoutes } from './users.routes.js';
import { UsersService } from './users.service.js';

/** Installs the System Administrator's user management under `/api/v1/admin/users`. */
export async function installUsers(
  app: FastifyInstance,
  deps: { db: Kysely<Database>; clock: Clock; bus: InvalidationBus },
): Promise<void> {
  await app.register(usersRoutes, { prefix: '/api/v1/admin/users', users: new UsersService(deps) });
}
