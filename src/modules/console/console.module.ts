import type { FastifyInstance } from 'fastify';
import { consoleRoutes } from './console.routes.js';

/**
 * Installs the web console (`web/dist`): installed last, it answers the GETs no module claimed (the
 * console's client-side routes).
 */
export async function installConsole(app: FastifyInstance, deps: { root?: string } = {}): Promise<void> {
  await app.register(consoleRoutes, deps.root === undefined ? {} : { root: deps.root });
}
