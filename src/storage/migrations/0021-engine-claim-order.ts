import type { MeridianMigration } from '../migrator.js';

/**
 * The engine's claim reads the oldest due executions by priority from an index in that order
 * (`status, priority, queued_at`), so that a claim costs the same with ten or a hundred thousand queued;
 * and a node run records `seq`, its place among the runs of its claim, so that runs started in the same
 * millisecond list in the order they ran.
 */
export const engineClaimOrder: MeridianMigration = {
  name: '0021-engine-claim-order',
  async up(db) {
    await db.schema
      .createIndex('engine_executions_due_idx')
      .on('engine_executions')
      .columns(['status', 'priority', 'queued_at'])
      .execute();
    await db.schema
      .alterTable('engine_node_runs')
      .addColumn('seq', 'integer', (c) => c.notNull().defaultTo(0))
      .execute();
  },
};
