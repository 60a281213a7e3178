import type { MeridianMigration } from '../migrator.js';

/**
 * Executions for flow nodes: a node run records the for-each iteration it belongs to (`iteration`, the
 * innermost index, and `iteration_key`, the indices of every enclosing loop such as `3.1`); an execution
 * parked by a long wait keeps what already ran in `checkpoint` (JSON) and resumes at `run_at`; the
 * trigger type is a column so that executions can be listed by it.
 */
export const executionFlow: MeridianMigration = {
  name: '0017-execution-flow',
  async up(db) {
    await db.schema.alterTable('engine_node_runs').addColumn('iteration', 'integer').execute();
    await db.schema.alterTable('engine_node_runs').addColumn('iteration_key', 'text').execute();
    await db.schema.alterTable('engine_executions').addColumn('checkpoint', 'text').execute();
    await db.schema.alterTable('engine_executions').addColumn('trigger_type', 'text').execute();
    const rows = await db.selectFrom('engine_executions').select(['id', 'trigger']).execute();
    for (const row of rows) {
      const type = (JSON.parse(row.trigger) as { type?: string }).type ?? 'manual';
      await db
        .updateTable('engine_executions')
        .set({ trigger_type: type })
        .where('id', '=', row.id)
        .execute();
    }
    await db.schema
      .createIndex('engine_node_runs_node_idx')
      .on('engine_node_runs')
      .columns(['execution_id', 'node_id', 'run_index'])
      .execute();
  },
};
