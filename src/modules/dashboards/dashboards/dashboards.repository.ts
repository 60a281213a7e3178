import type { Kysely } from 'kysely';
import { type ListParams, runListQuery } from '../../../platform/list-query.js';
import type { DashboardTable, Database } from '../../../storage/tables.js';
import { syncEdges } from '../../graph/edges/edges.repository.js';

export interface DashboardListFilter extends ListParams {
  /** A folder id, `root` for dashboards outside any folder, or undefined for all. */
  folderId?: string | undefined;
  tag?: string | undefined;
}

/** Dashboard rows and their tags. Plain rows; nothing HTTP. */
export class DashboardsRepository {
  constructor(private readonly db: Kysely<Database>) {}

  find(
    organizationId: string,
    id: string,
    db: Kysely<Database> = this.db,
  ): Promise<DashboardTable | undefined> {
    return db
      .selectFrom('dashboards')
      .selectAll()
      .where('organization_id', '=', organizationId)
      .where('id', '=', id)
      .executeTakeFirst();
  }

  async insert(trx: Kysely<Database>, row: DashboardTable, tags: string[]): Promise<void> {
    await trx.insertInto('dashboards').values(row).execute();
    await this.writeTags(trx, row.organization_id, row.id, tags);
    await syncEdges(trx, 'dashboard', row.id);
  }

  /** Saves a change when the row is still at `basedOn`; false when it has moved on (or is gone). */
  async update(
    trx: Kysely<Database>,
    organizationId: string,
    id: string,
    basedOn: number,
    values: Pick<
      DashboardTable,
      'folder_id' | 'title' | 'description' | 'tags' | 'definition' | 'updated_at' | 'updated_by'
    >,
    tags: string[],
  ): Promise<boolean> {
    const result = await trx
      .updateTable('dashboards')
      .set({ ...values, version: basedOn + 1 })
      .where('organization_id', '=', organizationId)
      .where('id', '=', id)
      .where('version', '=', basedOn)
      .executeTakeFirst();
    if (Number(result.numUpdatedRows) === 0) return false;
    await trx.deleteFrom('dashboard_tags').where('dashboard_id', '=', id).execute();
    await this.writeTags(trx, organizationId, id, tags);
    await syncEdges(trx, 'dashboard', id);
    return true;
  }

  async delete(trx: Kysely<Database>, organizationId: string, id: string): Promise<boolean> {
    await trx.deleteFrom('dashboard_tags').where('dashboard_id', '=', id).execute();
    const result = await trx
      .deleteFrom('dashboards')
      .where('organization_id', '=', organizationId)
      .where('id', '=', id)
      .executeTakeFirst();
    await syncEdges(trx, 'dashboard', id);
    return Number(result.numDeletedRows) > 0;
  }

  private async writeTags(trx: Kysely<Database>, organizationId: string, id: string, tags: string[]) {
    if (tags.length === 0) return;
    await trx
      .insertInto('dashboard_tags')
      .values(tags.map((tag) => ({ dashboard_id: id, organization_id: organizationId, tag })))
      .execute();
  }

  /** One page of the organization's dashboards: filter by folder and tag, search title and description. */
  list(organizationId: string, params: DashboardListFilter) {
    let query = this.db
      .selectFrom('dashboards as d')
      .selectAll('d')
      .where('d.organization_id', '=', organizationId);
    if (params.folderId === 'root') query = query.where('d.folder_id', 'is', null);
    else if (params.folderId !== undefined) query = query.where('d.folder_id', '=', params.folderId);
    if (params.tag !== undefined) {
      const tag = params.tag;
      query = query.where((eb) =>
        eb.exists(
          eb
            .selectFrom('dashboard_tags as t')
            .select('t.tag')
            .whereRef('t.dashboard_id', '=', 'd.id')
            .where('t.tag', '=', tag),
        ),
      );
    }
    return runListQuery(query, params, {
      searchColumns: ['d.title', 'd.description'],
      sortColumns: { title: 'd.title', createdAt: 'd.created_at', updatedAt: 'd.updated_at' },
      defaultSort: 'title',
      tieBreaker: 'd.id',
    });
  }
}
