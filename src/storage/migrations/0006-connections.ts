import type { MeridianMigration } from '../migrator.js';

/**
 * Connections to devices and systems, their saved functions, the runtime row each connection's owner
 * keeps (a lease in the database: one replica runs a connection at a time) and the state history.
 * Secret config fields live encrypted in `connections.secrets`, never in `config`.
 */
export const connections: MeridianMigration = {
  name: '0006-connections',
  async up(db) {
    await db.schema
      .createTable('connections')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('organization_id', 'text', (c) =>
        c.notNull().references('organizations.id').onDelete('cascade'),
      )
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('description', 'text', (c) => c.notNull())
      .addColumn('protocol', 'text', (c) => c.notNull())
      .addColumn('config', 'text', (c) => c.notNull())
      .addColumn('secrets', 'text')
      .addColumn('labels', 'text', (c) => c.notNull())
      .addColumn('read_only', 'integer', (c) => c.notNull())
      .addColumn('auto_start', 'integer', (c) => c.notNull())
      .addColumn('desired_state', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('created_by', 'text')
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .addColumn('updated_by', 'text')
      .addUniqueConstraint('connections_name_uq', ['organization_id', 'name'])
      .execute();

    await db.schema
      .createTable('connection_functions')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('organization_id', 'text', (c) => c.notNull())
      .addColumn('connection_id', 'text', (c) => c.notNull().references('connections.id').onDelete('cascade'))
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('description', 'text', (c) => c.notNull())
      .addColumn('type', 'text', (c) => c.notNull())
      .addColumn('config', 'text', (c) => c.notNull())
      .addColumn('parameters', 'text', (c) => c.notNull())
      .addColumn('uns', 'text')
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('created_by', 'text')
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .addColumn('updated_by', 'text')
      .addUniqueConstraint('connection_functions_name_uq', ['connection_id', 'name'])
      .execute();

    await db.schema
      .createTable('connection_runtime')
      .addColumn('connection_id', 'text', (c) =>
        c.primaryKey().references('connections.id').onDelete('cascade'),
      )
      .addColumn('organization_id', 'text', (c) => c.notNull())
      .addColumn('state', 'text', (c) => c.notNull())
      .addColumn('since', 'bigint', (c) => c.notNull())
      .addColumn('last_error', 'text')
      .addColumn('owner_replica', 'text')
      .addColumn('lease_until', 'bigint', (c) => c.notNull())
      .addColumn('metrics', 'text')
      .execute();

    await db.schema
      .createTable('connection_state_events')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('organization_id', 'text', (c) => c.notNull())
      .addColumn('connection_id', 'text', (c) => c.notNull())
      .addColumn('from_state', 'text', (c) => c.notNull())
      .addColumn('to_state', 'text', (c) => c.notNull())
      .addColumn('reason', 'text', (c) => c.notNull())
      .addColumn('error', 'text')
      .addColumn('replica', 'text')
      .addColumn('at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema
      .createIndex('connection_state_events_at_idx')
      .on('connection_state_events')
      .columns(['organization_id', 'connection_id', 'at'])
      .execute();
  },
};
