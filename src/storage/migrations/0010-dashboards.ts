import type { MeridianMigration } from '../migrator.js';

/**
 * Dashboards: nested folders (names unique among siblings) and dashboards whose definition (time range,
 * refresh, variables, panels) is one JSON document; tags in a table of their own for filtering.
 */
export const dashboards: MeridianMigration = {
  name: '0010-dashboards',
  async up(db) {
    await db.schema
      .createTable('dashboard_folders')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('organization_id', 'text', (c) =>
        c.notNull().references('organizations.id').onDelete('cascade'),
      )
      .addColumn('parent_id', 'text')
      // The parent id, or '' at the top: a unique index treats NULLs as distinct, '' is not.
      .addColumn('parent_key', 'text', (c) => c.notNull())
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('created_by', 'text')
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .addColumn('updated_by', 'text')
      .execute();
    await db.schema
      .createIndex('dashboard_folders_sibling_name_uq')
      .on('dashboard_folders')
      .columns(['organization_id', 'parent_key', 'name'])
      .unique()
      .execute();

    await db.schema
      .createTable('dashboards')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('organization_id', 'text', (c) =>
        c.notNull().references('organizations.id').onDelete('cascade'),
      )
      .addColumn('folder_id', 'text')
      .addColumn('title', 'text', (c) => c.notNull())
      .addColumn('description', 'text', (c) => c.notNull())
      .addColumn('tags', 'text', (c) => c.notNull())
      .addColumn('definition', 'text', (c) => c.notNull())
      .addColumn('version', 'integer', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('created_by', 'text')
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .addColumn('updated_by', 'text')
      .execute();
    await db.schema
      .createIndex('dashboards_org_folder_idx')
      .on('dashboards')
      .columns(['organization_id', 'folder_id'])
      .execute();

    await db.schema
      .createTable('dashboard_tags')
      .addColumn('dashboard_id', 'text', (c) => c.notNull().references('dashboards.id').onDelete('cascade'))
      .addColumn('organization_id', 'text', (c) => c.notNull())
      .addColumn('tag', 'text', (c) => c.notNull())
      .addPrimaryKeyConstraint('dashboard_tags_pk', ['dashboard_id', 'tag'])
      .execute();
    await db.schema
      .createIndex('dashboard_tags_org_tag_idx')
      .on('dashboard_tags')
      .columns(['organization_id', 'tag'])
      .execute();
  },
};
