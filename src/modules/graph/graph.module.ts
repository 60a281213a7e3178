import type { FastifyInstance } from 'fastify';
import type { Clock } from '../../platform/clock.js';
import type { Storage } from '../../storage/database.js';
import type { DependencyEdges } from './edges/edges.repository.js';
import { graphRoutes } from './graph.routes.js';
import { DependencyGraphService } from './graph.service.js';
import './impact/guard-impact.js';
import type { EntityKinds } from './kinds/entity-kinds.js';

/**
 * Installs the dependency graph under `/api/v1/dependencies/graph` and decorates the app with it, so
 * that delete and stop routes of other modules refuse what others depend on inside their transaction
 * (`impactCheck`, impact/guard-impact.ts). What it knows of each entity type comes from the registered
 * `kinds`. Edges written by an older extraction (or none, after the migration) are rebuilt before the
 * app is ready.
 */
export async function installGraph(
  app: FastifyInstance,
  deps: { storage: Storage; clock: Clock; kinds: EntityKinds; edges: DependencyEdges },
): Promise<DependencyGraphService> {
  const db = deps.storage.db;
  const graph = new DependencyGraphService({ db, clock: deps.clock, kinds: deps.kinds, edges: deps.edges });
  app.decorate('dependencyGraph', graph);
  app.addHook('onReady', async () => {
    if (await deps.edges.rebuildIfStale(db, deps.clock.now())) app.log.info('dependency graph rebuilt');
  });
  await app.register(graphRoutes, { prefix: '/api/v1/dependencies/graph', graph });
  return graph;
}
