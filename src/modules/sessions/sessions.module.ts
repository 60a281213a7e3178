import type { FastifyInstance } from 'fastify';
import type { Kysely } from 'kysely';
import type { Database } from '../../storage/tables.js';
import { sessionsRoutes } from './sessions.routes.js';
import type { SessionsService } from './sessions.service.js';

/**
 * Installs sign-in, sign-out and the session's own routes under `/api/v1/auth`. The service is made
 * before every module (access control verifies sessions through it) and handed in.
 */
export async function installSessions(
  app: FastifyInstance,
  deps: { sessions: SessionsService; db: Kysely<Database>; issuer: string },
): Promise<void> {
  await app.register(sessionsRoutes, {
    prefix: '/api/v1/auth',
    sessions: deps.sessions,
    db: deps.db,
    secureCookies: deps.issuer.startsWith('https:'),
  });
}
