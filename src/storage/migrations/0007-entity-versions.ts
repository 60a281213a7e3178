import type { MeridianMigration } from '../migrator.js';

/**
 * One version history for every versioned configuration entity (models, pipelines, dashboards,
 * connections): a full snapshot per version with its change type, computed summary, actor and time.
 * Snapshots never hold a secret: entities store secrets elsewhere and snapshot only that one is set.
 */
export const entityVersions: MeridianMigration = {
  name: '0007-entity-versions',
  async up(db) {
    await db.schema
      .createTable('entity_versions')
      .addColumn('organization_id', 'text', (c) =>
        c.notNull().references('organizations.id').onDelete('cascade'),
      )
      .addColumn('entity_type', 'text', (c) => c.notNull())
      .addColumn('entity_id', 'text', (c) => c.notNull())
      .addColumn('version', 'integer', (c) => c.notNull())
      .addColumn('change_type', 'text', (c) => c.notNull())
      .addColumn('snapshot', 'text', (c) => c.notNull())
      .addColumn('summary', 'text', (c) => c.notNull())
      .addColumn('reverted_from', 'integer')
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('created_by', 'text')
      .addColumn('created_by_client', 'text')
      .addPrimaryKeyConstraint('entity_versions_pk', ['entity_type', 'entity_id', 'version'])
      .execute();
    await db.schema
      .createIndex('entity_versions_org_idx')
      .on('entity_versions')
      .columns(['organization_id', 'entity_type'])
      .execute();
  },
};
