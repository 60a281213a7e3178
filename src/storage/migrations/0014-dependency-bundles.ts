import type { MeridianMigration } from '../migrator.js';

/**
 * Configuration exports and import plans (`/api/v1/dependencies/export|import`). An export keeps its
 * bundle (never a secret: secret fields become inputs) for download until it expires. An import plan
 * keeps the validated bundle and options (never the inputs, which carry secrets) so that an execute by
 * plan id can run it once; its result is stored so that a repeated execute answers the first result.
 */
export const dependencyBundles: MeridianMigration = {
  name: '0014-dependency-bundles',
  async up(db) {
    await db.schema
      .createTable('dependency_exports')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('organization_id', 'text', (c) =>
        c.notNull().references('organizations.id').onDelete('cascade'),
      )
      .addColumn('description', 'text', (c) => c.notNull())
      .addColumn('format_version', 'integer', (c) => c.notNull())
      .addColumn('entity_count', 'integer', (c) => c.notNull())
      .addColumn('size', 'integer', (c) => c.notNull())
      .addColumn('checksum', 'text', (c) => c.notNull())
      .addColumn('bundle', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('created_by', 'text')
      .addColumn('expires_at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema
      .createIndex('dependency_exports_org_idx')
      .on('dependency_exports')
      .columns(['organization_id', 'created_at'])
      .execute();
    await db.schema
      .createTable('dependency_import_plans')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('organization_id', 'text', (c) =>
        c.notNull().references('organizations.id').onDelete('cascade'),
      )
      .addColumn('bundle', 'text', (c) => c.notNull())
      .addColumn('options', 'text', (c) => c.notNull())
      .addColumn('plan', 'text', (c) => c.notNull())
      .addColumn('status', 'text', (c) => c.notNull())
      .addColumn('result', 'text')
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('created_by', 'text')
      .addColumn('expires_at', 'bigint', (c) => c.notNull())
      .addColumn('executed_at', 'bigint')
      .execute();
    await db.schema
      .createIndex('dependency_import_plans_org_idx')
      .on('dependency_import_plans')
      .columns(['organization_id', 'created_at'])
      .execute();
  },
};
