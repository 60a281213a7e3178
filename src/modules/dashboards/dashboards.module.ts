import type { FastifyInstance } from 'fastify';
import type { Clock } from '../../platform/clock.js';
import type { EntityEvents } from '../../platform/entity-events.js';
import type { Storage } from '../../storage/database.js';
import { EntityVersionsRepository } from '../versions/entity-versions.repository.js';
import type { EdgeWriter } from '../versions/versioned-rows.js';
import { dashboardsRoutes } from './dashboards/dashboards.routes.js';
import { DashboardsService } from './dashboards/dashboards.service.js';
import { foldersRoutes } from './folders/folders.routes.js';
import { FoldersService } from './folders/folders.service.js';
import { DashboardQueryService } from './query/dashboard-query.service.js';

/**
 * Installs dashboards under `/api/v1/uns/dashboards`: folders, dashboards with panels and versions, and
 * the dashboard query. Needs the unified namespace (`app.uns`) installed first.
 */
export async function installDashboards(
  app: FastifyInstance,
  deps: { storage: Storage; clock: Clock; topicPrefix: string; edges: EdgeWriter; events?: EntityEvents },
): Promise<void> {
  const { storage, clock, topicPrefix, edges } = deps;
  const db = storage.db;
  const versions = new EntityVersionsRepository(db);
  const folders = new FoldersService({ db, clock, versions, edges });
  const dashboards = new DashboardsService({
    db,
    clock,
    versions,
    edges,
    folders,
    topicPrefix,
    events: deps.events,
  });
  const query = new DashboardQueryService({
    db,
    clock,
    bindings: app.uns.bindings,
    topicPrefix,
    settle: () => app.uns.writer.settle(),
    rollups: app.uns.rollups,
  });
  await app.register(foldersRoutes, { prefix: '/api/v1/uns/dashboards/folders', folders });
  await app.register(dashboardsRoutes, { prefix: '/api/v1/uns/dashboards', dashboards, query, versions });
}
