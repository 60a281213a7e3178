import type { EdgeOwner, EntityKind } from '../../graph/kinds/entity-kinds.js';
import { entityRows, extractedById } from '../../graph/kinds/kind-rows.js';
import { dashboardExchange } from './dashboard-exchange.js';
import { dashboardReferences } from './dashboard-references.js';

/** A dashboard's edges: its folder, and the topics and filters its panels and variables read. */
const dashboardEdges: EdgeOwner = {
  ownerType: 'dashboard',
  table: 'dashboards',
  async extract(trx, ids) {
    const rows = await trx
      .selectFrom('dashboards')
      .select(['id', 'organization_id', 'folder_id', 'definition'])
      .where('id', 'in', ids)
      .execute();
    return extractedById(rows, (row) => ({
      organizationId: row.organization_id,
      from: { type: 'dashboard', id: row.id },
      references: dashboardReferences(row),
      active: true,
    }));
  },
};

/** Dashboards as the graph, export and import handle them. Nothing depends on a dashboard. */
export const dashboardKind: EntityKind = {
  type: 'dashboard',
  scopeFamily: 'dashboards',
  table: 'dashboards',
  async facts(db, organizationId, ids) {
    const rows = await entityRows(db.selectFrom('dashboards').select(['id', 'title']), organizationId, ids);
    return rows.map((r) => ({ type: 'dashboard', id: r.id, name: r.title, status: null, active: true }));
  },
  edges: [dashboardEdges],
  actions: ['delete', 'update'],
  // No rule reads a dashboard's members: any may be proposed.
  update: { members: null },
  exchange: dashboardExchange,
};
