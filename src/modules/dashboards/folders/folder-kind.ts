import { nodeKey } from '../../graph/edges/dependency-graph.js';
import type { EntityKind } from '../../graph/kinds/entity-kinds.js';
import { entityRows, plainFacts } from '../../graph/kinds/kind-rows.js';
import { folderExchange } from './folder-exchange.js';

/** Dashboard folders as the graph, export and import handle them: dashboards are in them. */
export const folderKind: EntityKind = {
  type: 'folder',
  scopeFamily: 'dashboards',
  table: 'dashboard_folders',
  async facts(db, organizationId, ids) {
    const rows = await entityRows(
      db.selectFrom('dashboard_folders').select(['id', 'name']),
      organizationId,
      ids,
    );
    return plainFacts('folder', rows);
  },
  actions: ['delete', 'update'],
  // No rule reads a folder's members: any may be proposed.
  update: { members: null },
  exchange: folderExchange,
  async unused({ db, organizationId, graph, entities }) {
    // A folder holding folders is in use too (parents are not edges of the graph).
    const parents = new Set<string>();
    for (const r of await db
      .selectFrom('dashboard_folders')
      .select('parent_id')
      .where('organization_id', '=', organizationId)
      .where('parent_id', 'is not', null)
      .execute())
      parents.add(r.parent_id!);
    return entities
      .filter((e) => graph.dependentsOf(nodeKey('folder', e.id)).length === 0 && !parents.has(e.id))
      .map((e) => ({ id: e.id, reason: 'it holds no dashboards and no folders' }));
  },
};
