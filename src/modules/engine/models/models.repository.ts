import { type Kysely, sql } from 'kysely';
import { type ListParams, runListQuery } from '../../../platform/list-query.js';
import type { Database, ModelBindingTable, ModelTable } from '../../../storage/tables.js';
import {
  deleteInOrganization,
  nameTakenInOrganization,
  updateAtVersion,
} from '../../../storage/versioned-rows.js';
import type { Stamped } from '../../versions/stamped-rows.js';
import type { ModelField } from './model-fields.js';

/** A model as the service handles it: JSON columns parsed. */
export interface ModelRow extends Stamped {
  name: string;
  description: string | null;
  labels: string[];
  fields: ModelField[];
}

export interface LeafBinding {
  /** The field's path below the prefix (`motor/current`). */
  path: string;
  /** The topic the UNS schema binding governs: `<prefix>/<path>`. */
  filter: string;
  schema: string;
  schemaVersion: number;
}

export interface ModelBindingRow {
  id: string;
  organizationId: string;
  modelId: string;
  topicPrefix: string;
  mode: 'normal' | 'strict';
  modelVersion: number;
  leaves: LeafBinding[];
  createdAt: number;
  createdBy: string | null;
  updatedAt: number;
}

const toModel = (row: ModelTable): ModelRow => ({
  id: row.id,
  organizationId: row.organization_id,
  name: row.name,
  description: row.description,
  labels: JSON.parse(row.labels),
  fields: JSON.parse(row.fields),
  version: Number(row.version),
  createdAt: Number(row.created_at),
  createdBy: row.created_by,
  updatedAt: Number(row.updated_at),
  updatedBy: row.updated_by,
});

const toBinding = (row: ModelBindingTable): ModelBindingRow => ({
  id: row.id,
  organizationId: row.organization_id,
  modelId: row.model_id,
  topicPrefix: row.topic_prefix,
  mode: row.mode,
  modelVersion: Number(row.model_version),
  leaves: JSON.parse(row.leaves),
  createdAt: Number(row.created_at),
  createdBy: row.created_by,
  updatedAt: Number(row.updated_at),
});

const fromModel = (m: ModelRow): ModelTable => ({
  id: m.id,
  organization_id: m.organizationId,
  name: m.name,
  name_key: m.name.toLowerCase(),
  description: m.description,
  labels: JSON.stringify(m.labels),
  fields: JSON.stringify(m.fields),
  version: m.version,
  created_at: m.createdAt,
  created_by: m.createdBy,
  updated_at: m.updatedAt,
  updated_by: m.updatedBy,
});

/** Escapes LIKE metacharacters. */
const likeEscape = (text: string) => text.replace(/[\\%_]/g, (c) => `\\${c}`);

/** Kysely queries of models and their bindings; plain rows, nothing HTTP. */
export class ModelsRepository {
  constructor(private readonly db: Kysely<Database>) {}

  async get(
    organizationId: string,
    id: string,
    db: Kysely<Database> = this.db,
  ): Promise<ModelRow | undefined> {
    const row = await db
      .selectFrom('models')
      .selectAll()
      .where('organization_id', '=', organizationId)
      .where('id', '=', id)
      .executeTakeFirst();
    return row && toModel(row);
  }

  async all(organizationId: string, db: Kysely<Database> = this.db): Promise<ModelRow[]> {
    const rows = await db
      .selectFrom('models')
      .selectAll()
      .where('organization_id', '=', organizationId)
      .execute();
    return rows.map(toModel);
  }

  async list(organizationId: string, params: ListParams & { label?: string | undefined }) {
    let query = this.db.selectFrom('models').selectAll().where('organization_id', '=', organizationId);
    if (params.label !== undefined) {
      // The label as a JSON string inside the JSON array text; ignoring case alike on both databases
      // (SQLite's LIKE ignores ASCII case, PostgreSQL's does not).
      const pattern = `%${likeEscape(JSON.stringify(params.label.toLowerCase()))}%`;
      query = query.where(sql<boolean>`lower(labels) like ${pattern} escape '\\'`);
    }
    const { rows, pagination } = await runListQuery(query, params, {
      searchColumns: ['name', 'description'],
      sortColumns: { name: 'name_key', createdAt: 'created_at', updatedAt: 'updated_at', version: 'version' },
      defaultSort: 'name',
      tieBreaker: 'id',
    });
    return { rows: rows.map(toModel), pagination };
  }

  /** New models, in multi-row inserts of 100 rows. */
  async insertMany(trx: Kysely<Database>, models: ModelRow[]): Promise<void> {
    for (let i = 0; i < models.length; i += 100)
      await trx
        .insertInto('models')
        .values(models.slice(i, i + 100).map(fromModel))
        .execute();
  }

  /** Saves `model` only while the stored version is `basedOn`; answers whether it did. */
  async update(trx: Kysely<Database>, model: ModelRow, basedOn: number): Promise<boolean> {
    const { id: _, organization_id, created_at: _c, created_by: _b, ...changes } = fromModel(model);
    return updateAtVersion(trx, 'models', organization_id, model.id, changes, basedOn);
  }

  async delete(trx: Kysely<Database>, organizationId: string, id: string): Promise<boolean> {
    return deleteInOrganization(trx, 'models', organizationId, id);
  }

  nameTaken(organizationId: string, name: string, exceptId?: string, db: Kysely<Database> = this.db) {
    return nameTakenInOrganization(db, 'models', organizationId, name, exceptId);
  }

  async bindingsOf(
    organizationId: string,
    modelIds: string[] | null,
    db: Kysely<Database> = this.db,
  ): Promise<ModelBindingRow[]> {
    let query = db.selectFrom('model_bindings').selectAll().where('organization_id', '=', organizationId);
    if (modelIds !== null) {
      if (modelIds.length === 0) return [];
      query = query.where('model_id', 'in', modelIds);
    }
    return (await query.orderBy('topic_prefix').execute()).map(toBinding);
  }

  async bindingAt(organizationId: string, topicPrefix: string, db: Kysely<Database> = this.db) {
    const row = await db
      .selectFrom('model_bindings')
      .selectAll()
      .where('organization_id', '=', organizationId)
      .where('topic_prefix', '=', topicPrefix)
      .executeTakeFirst();
    return row && toBinding(row);
  }

  async saveBinding(trx: Kysely<Database>, b: ModelBindingRow): Promise<void> {
    const row: ModelBindingTable = {
      id: b.id,
      organization_id: b.organizationId,
      model_id: b.modelId,
      topic_prefix: b.topicPrefix,
      mode: b.mode,
      model_version: b.modelVersion,
      leaves: JSON.stringify(b.leaves),
      created_at: b.createdAt,
      created_by: b.createdBy,
      updated_at: b.updatedAt,
    };
    await trx
      .insertInto('model_bindings')
      .values(row)
      .onConflict((oc) =>
        oc.column('id').doUpdateSet({
          mode: row.mode,
          model_version: row.model_version,
          leaves: row.leaves,
          updated_at: row.updated_at,
        }),
      )
      .execute();
  }

  async deleteBinding(trx: Kysely<Database>, organizationId: string, id: string): Promise<void> {
    await trx
      .deleteFrom('model_bindings')
      .where('organization_id', '=', organizationId)
      .where('id', '=', id)
      .execute();
  }
}
