import { type Kysely, sql } from 'kysely';
import { type ListParams, runListQuery } from '../../../platform/list-query.js';
import type { Database, PipelineTable } from '../../../storage/tables.js';
import {
  deleteInOrganization,
  nameTakenInOrganization,
  updateAtVersion,
} from '../../../storage/versioned-rows.js';
import type { Stamped } from '../../versions/stamped-rows.js';
import type { PipelineContent } from './pipeline-content.js';

/** A pipeline as the service handles it: JSON columns parsed. */
export interface PipelineRow extends PipelineContent, Stamped {}

const toPipeline = (row: PipelineTable): PipelineRow => ({
  id: row.id,
  organizationId: row.organization_id,
  name: row.name,
  description: row.description,
  labels: JSON.parse(row.labels),
  enabled: Number(row.enabled) === 1,
  settings: JSON.parse(row.settings),
  nodes: JSON.parse(row.nodes),
  edges: JSON.parse(row.edges),
  version: Number(row.version),
  createdAt: Number(row.created_at),
  createdBy: row.created_by,
  updatedAt: Number(row.updated_at),
  updatedBy: row.updated_by,
});

const fromPipeline = (p: PipelineRow): PipelineTable => ({
  id: p.id,
  organization_id: p.organizationId,
  name: p.name,
  name_key: p.name.toLowerCase(),
  description: p.description,
  labels: JSON.stringify(p.labels),
  enabled: p.enabled ? 1 : 0,
  settings: JSON.stringify(p.settings),
  nodes: JSON.stringify(p.nodes),
  edges: JSON.stringify(p.edges),
  version: p.version,
  created_at: p.createdAt,
  created_by: p.createdBy,
  updated_at: p.updatedAt,
  updated_by: p.updatedBy,
});

const likeEscape = (text: string) => text.replace(/[\\%_]/g, (c) => `\\${c}`);

/** Kysely queries of pipelines; plain rows, nothing HTTP. */
export class PipelinesRepository {
  constructor(private readonly db: Kysely<Database>) {}

  async get(organizationId: string, id: string, db: Kysely<Database> = this.db) {
    const row = await db
      .selectFrom('pipelines')
      .selectAll()
      .where('organization_id', '=', organizationId)
      .where('id', '=', id)
      .executeTakeFirst();
    return row && toPipeline(row);
  }

  /** A pipeline of any organization (webhooks, whose token names the pipeline). */
  async byId(id: string) {
    const row = await this.db.selectFrom('pipelines').selectAll().where('id', '=', id).executeTakeFirst();
    return row && toPipeline(row);
  }

  /** Enabled pipelines of every organization that have a node of `type` (triggers to register). */
  async enabledWithNodeType(type: string): Promise<PipelineRow[]> {
    const rows = await this.db
      .selectFrom('pipelines')
      .selectAll()
      .where('enabled', '=', 1)
      .where('nodes', 'like', `%${JSON.stringify(type)}%`)
      .execute();
    return rows.map(toPipeline).filter((p) => p.nodes.some((n) => n.type === type));
  }

  async list(
    organizationId: string,
    params: ListParams & { enabled?: boolean | undefined; label?: string | undefined },
  ) {
    let query = this.db.selectFrom('pipelines').selectAll().where('organization_id', '=', organizationId);
    if (params.enabled !== undefined) query = query.where('enabled', '=', params.enabled ? 1 : 0);
    if (params.label !== undefined) {
      // `key` or `key=value`, matched in the JSON text of the labels.
      const [key, value] = params.label.split('=', 2) as [string, string | undefined];
      const fragment =
        value === undefined ? `${JSON.stringify(key)}:` : `${JSON.stringify(key)}:${JSON.stringify(value)}`;
      query = query.where(sql<boolean>`labels like ${`%${likeEscape(fragment)}%`} escape '\\'`);
    }
    const { rows, pagination } = await runListQuery(query, params, {
      searchColumns: ['name', 'description'],
      sortColumns: { name: 'name_key', createdAt: 'created_at', updatedAt: 'updated_at' },
      defaultSort: 'name',
      tieBreaker: 'id',
    });
    return { rows: rows.map(toPipeline), pagination };
  }

  /** New pipelines, in multi-row inserts of 100 rows. */
  async insertMany(trx: Kysely<Database>, pipelines: PipelineRow[]): Promise<void> {
    for (let i = 0; i < pipelines.length; i += 100)
      await trx
        .insertInto('pipelines')
        .values(pipelines.slice(i, i + 100).map(fromPipeline))
        .execute();
  }

  /** Saves `pipeline` only while the stored version is `basedOn`; answers whether it did. */
  async update(trx: Kysely<Database>, pipeline: PipelineRow, basedOn: number): Promise<boolean> {
    const { id: _, organization_id, created_at: _c, created_by: _b, ...changes } = fromPipeline(pipeline);
    return updateAtVersion(trx, 'pipelines', organization_id, pipeline.id, changes, basedOn);
  }

  async delete(trx: Kysely<Database>, organizationId: string, id: string): Promise<boolean> {
    return deleteInOrganization(trx, 'pipelines', organizationId, id);
  }

  nameTaken(organizationId: string, name: string, exceptId?: string, db: Kysely<Database> = this.db) {
    return nameTakenInOrganization(db, 'pipelines', organizationId, name, exceptId);
  }
}
