import type { EntityKind } from '../../graph/kinds/entity-kinds.js';
import { edgeOwner, entityRows, plainFacts } from '../../graph/kinds/kind-rows.js';
import { dashboardExchange } from './dashboard-exchange.js';
import { dashboardReferences } from './dashboard-references.js';

/** A dashboard's edges: its folder, and the topics and filters its panels and variables read. */
const dashboardEdges = edgeOwner(
  'dashboard',
  'dashboards',
  (trx, ids) =>
    trx
      .selectFrom('dashboards')
      .select(['id', 'organization_id', 'folder_id', 'definition'])
      .where('id', 'in', ids)
      .execute(),
  (row) => ({ references: dashboardReferences(row) }),
);

/** Dashboards as the graph, export and import handle them. Nothing depends on a dashboard. */
export const dashboardKind: EntityKind = {
  type: 'dashboard',
  scopeFamily: 'dashboards',
  table: 'dashboards',
  async facts(db, organizationId, ids) {
    const rows = await entityRows(
      db.selectFrom('dashboards').select(['id', 'title as name']),
      organizationId,
      ids,
    );
    return plainFacts('dashboard', rows);
  },
  edges: [dashboardEdges],
  actions: ['delete', 'update'],
  // No rule reads a dashboard's members: any may be proposed.
  update: { members: null },
  exchange: dashboardExchange,
};
