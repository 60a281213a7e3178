import type { MeridianMigration } from '../migrator.js';

/**
 * Data models (`/api/v1/engine/models`): typed fields as JSON text, the current version number (the
 * history lives in `entity_versions`), and the bindings of a model to a UNS topic prefix, each of which
 * owns one UNS schema binding per leaf field.
 */
export const models: MeridianMigration = {
  name: '0008-models',
  async up(db) {
    await db.schema
      .createTable('models')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('organization_id', 'text', (c) =>
        c.notNull().references('organizations.id').onDelete('cascade'),
      )
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('name_key', 'text', (c) => c.notNull())
      .addColumn('description', 'text')
      .addColumn('labels', 'text', (c) => c.notNull())
      .addColumn('fields', 'text', (c) => c.notNull())
      .addColumn('version', 'integer', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('created_by', 'text')
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .addColumn('updated_by', 'text')
      .addUniqueConstraint('models_org_name_key', ['organization_id', 'name_key'])
      .execute();
    await db.schema
      .createTable('model_bindings')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('organization_id', 'text', (c) =>
        c.notNull().references('organizations.id').onDelete('cascade'),
      )
      .addColumn('model_id', 'text', (c) => c.notNull().references('models.id').onDelete('cascade'))
      .addColumn('topic_prefix', 'text', (c) => c.notNull())
      .addColumn('mode', 'text', (c) => c.notNull())
      .addColumn('model_version', 'integer', (c) => c.notNull())
      .addColumn('leaves', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('created_by', 'text')
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .addUniqueConstraint('model_bindings_org_prefix', ['organization_id', 'topic_prefix'])
      .execute();
    await db.schema.createIndex('model_bindings_model_idx').on('model_bindings').column('model_id').execute();
  },
};
