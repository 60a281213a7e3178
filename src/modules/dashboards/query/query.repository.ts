import { type Kysely, sql } from 'kysely';
import type { DialectName } from '../../../storage/database.js';
import type { Database } from '../../../storage/tables.js';
import type { BucketRow } from '../../uns/data/data.repository.js';

/** The reads the dashboard query adds to the historian's: numbers inside object values, topic levels. */
export class DashboardQueryRepository {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly dialect: DialectName,
  ) {}

  /** The numeric member at `parts` of each value, as SQL (null where it is absent or not a number). */
  private member(alias: string, parts: (string | number)[]) {
    const column = sql.ref(`${alias}.value_json`);
    if (this.dialect === 'sqlite') {
      const path = `$${parts.map((p) => (typeof p === 'number' ? `[${p}]` : `."${p}"`)).join('')}`;
      return sql<
        number | null
      >`(case when json_valid(${column}) and json_type(${column}, ${path}) in ('integer', 'real') then json_extract(${column}, ${path}) end)`;
    }
    const path = `{${parts.map((p) => `"${String(p)}"`).join(',')}}`;
    return sql<
      number | null
    >`(case when jsonb_typeof(${column}::jsonb #> ${path}::text[]) = 'number' then (${column}::jsonb #>> ${path}::text[])::double precision end)`;
  }

  /**
   * Buckets of the number at a field path inside object values: the historian's bucket query
   * (data.repository.ts) with the member in place of `value_num`, buckets aligned to multiples of
   * `widthUs` from the epoch.
   */
  async fieldBuckets(
    topicId: number,
    parts: (string | number)[],
    fromUs: number,
    toUs: number,
    widthUs: number,
  ): Promise<BucketRow[]> {
    const v = this.member('v', parts);
    const origin = Math.floor(fromUs / widthUs) * widthUs;
    const { rows } = await sql<{
      bucket: number;
      cnt: number;
      avg_v: number;
      min_v: number;
      max_v: number;
      first_ts: number;
      last_ts: number;
    }>`
      select cast((v.ts_us - ${origin}) / ${widthUs} as bigint) as bucket, count(${v}) as cnt, avg(${v}) as avg_v,
        min(${v}) as min_v, max(${v}) as max_v, min(case when ${v} is not null then v.ts_us end) as first_ts,
        max(case when ${v} is not null then v.ts_us end) as last_ts
      from uns_values v
      where v.topic_id = ${topicId} and v.ts_us >= ${fromUs} and v.ts_us < ${toUs}
      group by 1
      having count(${v}) > 0
      order by 1`.execute(this.db);
    if (rows.length === 0) return [];
    // First and last values by primary key, as the historian's bucket query reads them.
    const stamps = rows.flatMap((r) => [Number(r.first_ts), Number(r.last_ts)]);
    const f = this.member('f', parts);
    const values = new Map<number, number>();
    for (let i = 0; i < stamps.length; i += 500) {
      const chunk = stamps.slice(i, i + 500);
      const found = await this.db
        .selectFrom('uns_values as f')
        .select(['f.ts_us', f.as('n')])
        .where('f.topic_id', '=', topicId)
        .where('f.ts_us', 'in', chunk)
        .execute();
      for (const row of found) values.set(Number(row.ts_us), Number(row.n));
    }
    return rows.map((row) => ({
      bucketStartUs: origin + Number(row.bucket) * widthUs,
      count: Number(row.cnt),
      avg: Number(row.avg_v),
      min: Number(row.min_v),
      max: Number(row.max_v),
      first: values.get(Number(row.first_ts)) ?? Number(row.min_v),
      last: values.get(Number(row.last_ts)) ?? Number(row.max_v),
    }));
  }

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
