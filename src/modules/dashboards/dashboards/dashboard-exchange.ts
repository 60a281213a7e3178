import type { DashboardFolderTable, DashboardTable } from '../../../storage/tables.js';
import {
  type BundleRef,
  type ExchangeAdapter,
  plannedRows,
  type WriteContext,
} from '../../graph/kinds/kind-exchange.js';
import { entityRows } from '../../graph/kinds/kind-rows.js';
import { createdColumns } from '../../versions/stamped-rows.js';
import { importVersions } from '../../versions/version-batches.js';
import { folderPaths } from '../folders/folder-exchange.js';
import { normalizeDefinition, normalizeTags } from './dashboard-rules.js';
import { dashboardRows } from './dashboard-versions.js';
import { DashboardsRepository } from './dashboards.repository.js';

/** A dashboard in a bundle: its folder by bundle key. */
export interface BundleDashboard {
  key: string;
  sourceId: string;
  title: string;
  description: string;
  folder: BundleRef;
  tags: string[];
  definition: Record<string, unknown>;
}

const lower = (s: string) => s.toLowerCase();

/**
 * Dashboards in a bundle: keyed by their folder's path and title, matched by title inside their
 * folder; an import checks each as a save does (its definition and tags normalized) and records the
 * versions of what it creates or overwrites.
 */
export const dashboardExchange: ExchangeAdapter<DashboardTable[], BundleDashboard> = {
  section: 'dashboards',
  async read(db, organizationId) {
    const rows = await entityRows(db.selectFrom('dashboards').selectAll(), organizationId, null);
    return rows.sort((a, b) => a.title.localeCompare(b.title) || a.id.localeCompare(b.id));
  },
  entities(rows, catalog) {
    const pathOf = folderPaths((catalog.get('folder') ?? []) as DashboardFolderTable[]);
    return rows.map((d) => {
      const path = pathOf(d.folder_id);
      return {
        ref: `dashboard:${d.id}`,
        name: d.title,
        key: `dashboard:${path ? `${path}/` : ''}${d.title}`,
        requires: d.folder_id ? [`folder:${d.folder_id}`] : [],
      };
    });
  },
  export(rows, { inBundle, keyOf, ref }) {
    const items = rows
      .filter((d) => inBundle('dashboard', d.id))
      .map((d) => ({
        key: keyOf('dashboard', d.id),
        sourceId: d.id,
        title: d.title,
        description: d.description,
        folder: ref('folder', d.folder_id),
        tags: JSON.parse(d.tags),
        definition: JSON.parse(d.definition),
      }));
    return { items };
  },
  plan(items, rows, { targetOf, find, decide }) {
    for (const d of items) {
      const folderId = d.folder?.$ref ? (targetOf.get(d.folder.$ref) ?? null) : null;
      const titles = new Set(rows.filter((r) => r.folder_id === folderId).map((r) => lower(r.title)));
      const existing = find(
        rows,
        d.sourceId,
        (r) => r.folder_id === folderId && lower(r.title) === lower(d.title),
      );
      decide('dashboard', d.key, d.title, existing, titles, 100);
    }
  },
  check(items, { unresolved }) {
    for (const d of items) unresolved(d.key, d.folder, 'its folder');
  },
  async write(items, rows, context: WriteContext) {
    const { trx, organizationId, actor, now, nameOf, idOf } = context;
    const written = await plannedRows(items, context, async (d, a) => {
      let columns: Pick<DashboardTable, 'folder_id' | 'title' | 'description' | 'tags' | 'definition'>;
      try {
        const definition = normalizeDefinition(
          (d.definition ?? {}) as Parameters<typeof normalizeDefinition>[0],
          context.topicPrefix,
          now,
        );
        columns = {
          folder_id: idOf(d.folder),
          title: nameOf(a),
          description: d.description ?? '',
          tags: JSON.stringify(normalizeTags(d.tags ?? [])),
          definition: JSON.stringify(definition),
        };
      } catch (error) {
        context.entityError(d.key, error);
      }
      const stamp = { updated_at: now, updated_by: actor.userId };
      const current = a.action === 'update' ? rows.find((r) => r.id === a.targetId) : undefined;
      const next: DashboardTable = current
        ? { ...current, ...columns, ...stamp, version: Number(current.version) + 1 }
        : { id: a.targetId, organization_id: organizationId, ...columns, ...createdColumns(actor, now) };
      return { current, next };
    });
    const dashboards = dashboardRows(new DashboardsRepository(trx));
    await importVersions(trx, dashboards, context, { organizationId, actor, at: now, ...written });
    return undefined;
  },
};
