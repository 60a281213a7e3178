import type { MeridianMigration } from '../migrator.js';

/**
 * An execution runs its pipeline as it was at the version it was queued with. That definition (nodes,
 * edges, settings: a kilobyte or more) was stored in every execution row; it is now stored once per
 * pipeline version in `engine_definitions`, and new execution rows keep an empty `definition`. Rows are
 * rewritten at each claim and finish, so a smaller row makes every turn of the engine cheaper. Rows from
 * before keep their own copy (read as before). Definitions are never deleted: one per version that ran,
 * they outlive their pipeline as its executions do, and go with their organization.
 */
export const engineDefinitions: MeridianMigration = {
  name: '0022-engine-definitions',
  async up(db) {
    await db.schema
      .createTable('engine_definitions')
      .addColumn('organization_id', 'text', (c) =>
        c.notNull().references('organizations.id').onDelete('cascade'),
      )
      .addColumn('pipeline_id', 'text', (c) => c.notNull())
      .addColumn('pipeline_version', 'integer', (c) => c.notNull())
      .addColumn('definition', 'text', (c) => c.notNull())
      .addPrimaryKeyConstraint('engine_definitions_pk', ['pipeline_id', 'pipeline_version'])
      .execute();
  },
};
