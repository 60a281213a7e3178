import type { MeridianMigration } from '../migrator.js';

/**
 * Per-organization settings with their version and maintenance mode, the organization's logo, and an
 * index that lets the audit log be browsed per organization (the change history lives in `audit_log`).
 */
export const organizationSettings: MeridianMigration = {
  name: '0009-organization-settings',
  async up(db) {
    await db.schema
      .createTable('organization_settings')
      .addColumn('organization_id', 'text', (c) =>
        c.primaryKey().references('organizations.id').onDelete('cascade'),
      )
      .addColumn('settings', 'text', (c) => c.notNull())
      .addColumn('version', 'integer', (c) => c.notNull())
      .addColumn('maintenance_enabled', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('maintenance_reason', 'text')
      .addColumn('maintenance_since', 'bigint')
      .addColumn('maintenance_until', 'bigint')
      .addColumn('maintenance_by', 'text')
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .addColumn('updated_by', 'text')
      .execute();
    await db.schema
      .createIndex('organization_settings_maintenance_idx')
      .on('organization_settings')
      .columns(['maintenance_enabled', 'maintenance_until'])
      .execute();

    await db.schema
      .createTable('organization_logos')
      .addColumn('organization_id', 'text', (c) =>
        c.primaryKey().references('organizations.id').onDelete('cascade'),
      )
      .addColumn('content_type', 'text', (c) => c.notNull())
      // Base64 text: one column type that both dialects store and return alike.
      .addColumn('data', 'text', (c) => c.notNull())
      .addColumn('size', 'integer', (c) => c.notNull())
      .addColumn('etag', 'text', (c) => c.notNull())
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .addColumn('updated_by', 'text')
      .execute();

    await db.schema
      .createIndex('audit_log_org_at_idx')
      .on('audit_log')
      .columns(['organization_id', 'at'])
      .execute();
  },
};
