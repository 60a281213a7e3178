import type { Kysely } from 'kysely';
import { type ListParams, runListQuery } from '../../../platform/list-query.js';
import type { DashboardTable, Database } from '../../../storage/tables.js';

export interface DashboardListFilter extends ListParams {
  /** A folder id, `root` for dashboards outside any folder, or undefined for all. */
  folderId?: string | undefined;
  tag?: string | undefined;
}

/** The rows of a dashboard's tags (`tags` holds them as JSON). */
const tagRows = (row: DashboardTable) =>
  (JSON.parse(row.tags) as string[]).map((tag) => ({
    dashboard_id: row.id,
    organization_id: row.organization_id,
    tag,
  }));

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

  /** New dashboards with their tags, in multi-row inserts of 100 rows. */
  async insertMany(trx: Kysely<Database>, rows: DashboardTable[]): Promise<void> {
    const tags = rows.flatMap((row) => tagRows(row));
    for (let i = 0; i < rows.length; i += 100)
      await trx
        .insertInto('dashboards')
        .values(rows.slice(i, i + 100))
        .execute();
    for (let i = 0; i < tags.length; i += 100)
      await trx
        .insertInto('dashboard_tags')
        .values(tags.slice(i, i + 100))
        .execute();
  }

  /** Saves `next` (its tags too) when the row is still at `basedOn`; false when it has moved on (or is gone). */
  async update(trx: Kysely<Database>, next: DashboardTable, basedOn: number): Promise<boolean> {
    const { id, organization_id, created_at: _c, created_by: _b, ...values } = next;
    const result = await trx
      .updateTable('dashboards')
      .set(values)
      .where('organization_id', '=', organization_id)
      .where('id', '=', id)
      .where('version', '=', basedOn)
      .executeTakeFirst();
    if (Number(result.numUpdatedRows) === 0) return false;
    await trx.deleteFrom('dashboard_tags').where('dashboard_id', '=', id).execute();
    const tags = tagRows(next);
    if (tags.length > 0) await trx.insertInto('dashboard_tags').values(tags).execute();
    return true;
  }

  async delete(trx: Kysely<Database>, organizationId: string, id: string): Promise<boolean> {
    await trx.deleteFrom('dashboard_tags').where('dashboard_id', '=', id).execute();
    const result = await trx
      .deleteFrom('dashboards')
      .where('organization_id', '=', organizationId)
      .where('id', '=', id)
      .executeTakeFirst();
    return Number(result.numDeletedRows) > 0;
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
