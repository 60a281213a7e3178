import type { FastifyInstance } from 'fastify';
import { healthRoutes, type ReadinessCheck } from './health.routes.js';

/**
 * Installs `/healthz` and `/readyz`. `checks` is a live record: a module that starts later (the UNS's
 * broker) adds its own check to it.
 */
export async function installHealth(
  app: FastifyInstance,
  deps: { checks: Record<string, ReadinessCheck> },
): Promise<void> {
  await app.register(healthRoutes, { checks: deps.checks });
}
