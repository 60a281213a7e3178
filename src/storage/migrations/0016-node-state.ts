import type { MeridianMigration } from '../migrator.js';

/**
 * State of stateful pipeline nodes (buffer, deadband, on change): one row per pipeline, node and key,
 * the state as JSON text with a version for optimistic updates, so that two executions running at once
 * never lose each other's update and a restart keeps what was buffered. A node run records the side
 * effect it really had (`side_effect`): a connection call that writes marks its run before the write,
 * so that recovery after a crash never runs that write again.
 */
export const nodeState: MeridianMigration = {
  name: '0016-node-state',
  async up(db) {
    await db.schema
      .createTable('engine_node_state')
      .addColumn('organization_id', 'text', (c) =>
        c.notNull().references('organizations.id').onDelete('cascade'),
      )
      .addColumn('pipeline_id', 'text', (c) => c.notNull())
      .addColumn('node_id', 'text', (c) => c.notNull())
      .addColumn('state_key', 'text', (c) => c.notNull())
      .addColumn('state', 'text', (c) => c.notNull())
      .addColumn('version', 'integer', (c) => c.notNull())
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .addPrimaryKeyConstraint('engine_node_state_pk', ['pipeline_id', 'node_id', 'state_key'])
      .execute();
    await db.schema.alterTable('engine_node_runs').addColumn('side_effect', 'text').execute();
  },
};
