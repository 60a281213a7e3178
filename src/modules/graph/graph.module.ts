import type { FastifyInstance } from 'fastify';
import type { Clock } from '../../platform/clock.js';
import type { Storage } from '../../storage/database.js';
import { rebuildEdgesIfStale } from './edges/edges.repository.js';
import { graphRoutes } from './graph.routes.js';
import { DependencyGraphService } from './graph.service.js';
import './impact/guard-impact.js';

/**
 * Installs the dependency graph under `/api/v1/dependencies/graph` and decorates the app with it, so
 * that delete and stop routes of other modules refuse what others depend on inside their transaction
 * (`impactCheck`, guard-impact.ts). Edges written by an older extraction (or none, after the
 * migration) are rebuilt before the app is ready.
 */
export async function installDependencies(
  app: FastifyInstance,
  deps: { storage: Storage; clock: Clock },
): Promise<DependencyGraphService> {
  const db = deps.storage.db;
  const graph = new DependencyGraphService({ db, clock: deps.clock });
  app.decorate('dependencyGraph', graph);
  app.addHook('onReady', async () => {
    if (await rebuildEdgesIfStale(db, deps.clock.now())) app.log.info('dependency graph rebuilt');
  });
  await app.register(graphRoutes, { prefix: '/api/v1/dependencies/graph', graph });
  return graph;
}
