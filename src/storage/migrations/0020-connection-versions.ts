import type { MeridianMigration } from '../migrator.js';

/**
 * Connections and their functions become versioned entities (entity types `connection` and `function`
 * in `entity_versions`): each row carries an integer `version`. Existing rows start at 1; their
 * version 1 snapshot is recorded on first need (the first read of their history or their first change,
 * see `VersionHistory.ensureBaseline`), because a snapshot shows which secrets are set and only the
 * running server holds the key that opens them.
 */
export const connectionVersions: MeridianMigration = {
  name: '0020-connection-versions',
  async up(db) {
    await db.schema
      .alterTable('connections')
      .addColumn('version', 'integer', (c) => c.notNull().defaultTo(1))
      .execute();
    await db.schema
      .alterTable('connection_functions')
      .addColumn('version', 'integer', (c) => c.notNull().defaultTo(1))
      .execute();
  },
};
