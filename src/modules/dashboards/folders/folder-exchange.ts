import type { DashboardFolderTable } from '../../../storage/tables.js';
import type { BundleRef, ExchangeAdapter } from '../../graph/kinds/kind-exchange.js';
import { byName, entityRows } from '../../graph/kinds/kind-rows.js';

/** A folder in a bundle: its parent by bundle key. */
export interface BundleFolder {
  key: string;
  sourceId: string;
  name: string;
  parent: BundleRef;
}

const lower = (s: string) => s.toLowerCase();

/** Each folder's path of names from the top (`Plant/Lines`), by id: folder and dashboard keys are built from it. */
export function folderPaths(rows: readonly DashboardFolderTable[]): (id: string | null) => string {
  const folders = new Map(rows.map((f) => [f.id, f]));
  return (id) => {
    const names: string[] = [];
    for (let at = id, depth = 0; at && depth < 10; depth++) {
      const folder = folders.get(at);
      if (!folder) break;
      names.unshift(folder.name);
      at = folder.parent_id;
    }
    return names.join('/');
  };
}

/**
 * Dashboard folders in a bundle: keyed by their path, parents before children; an import matches a
 * folder among its siblings and creates the missing ones (a matched folder only has its update stamped:
 * folders are not versioned).
 */
export const folderExchange: ExchangeAdapter<DashboardFolderTable[], BundleFolder> = {
  section: 'folders',
  read: async (db, organizationId) =>
    byName(await entityRows(db.selectFrom('dashboard_folders').selectAll(), organizationId, null)),
  entities(rows) {
    const pathOf = folderPaths(rows);
    return rows.map((f) => ({
      ref: `folder:${f.id}`,
      name: f.name,
      key: `folder:${pathOf(f.id)}`,
      requires: f.parent_id ? [`folder:${f.parent_id}`] : [],
    }));
  },
  export(rows, { inBundle, keyOf, ref }) {
    const items = rows
      .filter((f) => inBundle('folder', f.id))
      .map((f) => ({
        key: keyOf('folder', f.id),
        sourceId: f.id,
        name: f.name,
        parent: ref('folder', f.parent_id),
      }));
    // Parents before children, so that an import can create them in order.
    items.sort((a, b) => a.key.split('/').length - b.key.split('/').length || a.key.localeCompare(b.key));
    return { items };
  },
  plan(items, rows, { targetOf, bundleKeys, find, decide, problem }) {
    for (const f of items) {
      const parentKey = f.parent?.$ref ?? null;
      const parentId = parentKey === null ? null : (targetOf.get(parentKey) ?? null);
      if (parentKey !== null && !bundleKeys.has(parentKey))
        problem(f.key, 'unresolved_reference', `${f.key}: its parent ${parentKey} is not in the bundle`);
      const siblings = rows.filter((r) => r.parent_id === parentId);
      const existing = find(
        rows,
        f.sourceId,
        (r) => r.parent_id === parentId && lower(r.name) === lower(f.name),
      );
      decide('folder', f.key, f.name, existing, new Set(siblings.map((r) => lower(r.name))), 100);
    }
  },
  async write(items, _rows, { trx, organizationId, actor, now, action, writes, nameOf, idOf }) {
    const stamp = { updated_at: now, updated_by: actor.userId };
    for (const f of items) {
      const a = action(f.key);
      if (!writes(a)) continue;
      if (a.action === 'update') {
        await trx.updateTable('dashboard_folders').set(stamp).where('id', '=', a.targetId).execute();
        continue;
      }
      const parent = idOf(f.parent);
      await trx
        .insertInto('dashboard_folders')
        .values({
          id: a.targetId,
          organization_id: organizationId,
          parent_id: parent,
          parent_key: parent ?? '',
          name: nameOf(a),
          created_at: now,
          created_by: actor.userId,
          ...stamp,
        })
        .execute();
    }
    return undefined;
  },
};
