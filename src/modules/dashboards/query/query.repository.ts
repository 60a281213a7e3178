import type { Kysely } from 'kysely';
import type { Database } from '../../../storage/tables.js';

/** The reads the dashboard query adds to the historian's: topic ids, latest values, topic levels. */
export class DashboardQueryRepository {
  constructor(private readonly db: Kysely<Database>) {}

  /** Ids of the organization's topics, by path; paths without a node are left out. */
  async topicIds(organizationId: string, paths: string[]): Promise<Map<string, number>> {
    const out = new Map<string, number>();
    if (paths.length === 0) return out;
    const rows = await this.db
      .selectFrom('uns_topics')
      .select(['id', 'path'])
      .where('organization_id', '=', organizationId)
      .where('path', 'in', paths)
      .execute();
    for (const row of rows) out.set(row.path, Number(row.id));
    return out;
  }

  /** Latest value rows of several topics at once. */
  async latestOf(topicIds: number[]) {
    if (topicIds.length === 0) return [];
    return this.db
      .selectFrom('uns_latest')
      .select(['topic_id', 'ts_us', 'value_json', 'quality', 'source', 'received_us'])
      .where('topic_id', 'in', topicIds)
      .execute();
  }

  /** The names of the nodes directly below `parentPath` (null: the top level), sorted. */
  async childNames(organizationId: string, parentPath: string | null, limit: number): Promise<string[]> {
    let q = this.db.selectFrom('uns_topics').select('name').where('organization_id', '=', organizationId);
    q = parentPath === null ? q.where('parent_path', 'is', null) : q.where('parent_path', '=', parentPath);
    const rows = await q.orderBy('name').limit(limit).execute();
    return rows.map((r) => r.name);
  }
}
