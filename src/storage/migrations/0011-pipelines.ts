import type { MeridianMigration } from '../migrator.js';

/**
 * Pipelines (`/api/v1/engine/pipelines`): the graph (nodes and edges) and settings as JSON text, the
 * current version (the history lives in `entity_versions`). Executions are the engine's queue: a
 * replica claims a queued row (or one whose lease expired) with a conditional update, and node runs
 * are stored as they finish, so that a restarted engine resumes without re-running finished nodes.
 */
export const pipelines: MeridianMigration = {
  name: '0011-pipelines',
  async up(db) {
    await db.schema
      .createTable('pipelines')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('organization_id', 'text', (c) =>
        c.notNull().references('organizations.id').onDelete('cascade'),
      )
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('name_key', 'text', (c) => c.notNull())
      .addColumn('description', 'text')
      .addColumn('labels', 'text', (c) => c.notNull())
      .addColumn('enabled', 'integer', (c) => c.notNull())
      .addColumn('settings', 'text', (c) => c.notNull())
      .addColumn('nodes', 'text', (c) => c.notNull())
      .addColumn('edges', 'text', (c) => c.notNull())
      .addColumn('version', 'integer', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('created_by', 'text')
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .addColumn('updated_by', 'text')
      .addUniqueConstraint('pipelines_org_name_key', ['organization_id', 'name_key'])
      .execute();
    await db.schema
      .createTable('engine_executions')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('organization_id', 'text', (c) =>
        c.notNull().references('organizations.id').onDelete('cascade'),
      )
      // No foreign key: executions outlive their pipeline until retention.
      .addColumn('pipeline_id', 'text', (c) => c.notNull())
      .addColumn('pipeline_version', 'integer', (c) => c.notNull())
      .addColumn('definition', 'text', (c) => c.notNull())
      .addColumn('status', 'text', (c) => c.notNull())
      .addColumn('reason', 'text')
      .addColumn('trigger', 'text', (c) => c.notNull())
      .addColumn('input', 'text')
      .addColumn('error', 'text')
      .addColumn('priority', 'integer', (c) => c.notNull())
      .addColumn('run_at', 'bigint', (c) => c.notNull())
      .addColumn('locked_by', 'text')
      .addColumn('lease_until', 'bigint')
      .addColumn('claims', 'integer', (c) => c.notNull())
      .addColumn('idempotency_key', 'text', (c) => c.unique())
      .addColumn('retry_of', 'text')
      .addColumn('queued_at', 'bigint', (c) => c.notNull())
      .addColumn('started_at', 'bigint')
      .addColumn('finished_at', 'bigint')
      .execute();
    await db.schema
      .createIndex('engine_executions_claim_idx')
      .on('engine_executions')
      .columns(['status', 'run_at'])
      .execute();
    await db.schema
      .createIndex('engine_executions_pipeline_idx')
      .on('engine_executions')
      .columns(['organization_id', 'pipeline_id', 'queued_at'])
      .execute();
    await db.schema
      .createTable('engine_node_runs')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('execution_id', 'text', (c) =>
        c.notNull().references('engine_executions.id').onDelete('cascade'),
      )
      .addColumn('node_id', 'text', (c) => c.notNull())
      .addColumn('node_name', 'text', (c) => c.notNull())
      .addColumn('type', 'text', (c) => c.notNull())
      .addColumn('run_index', 'integer', (c) => c.notNull())
      .addColumn('status', 'text', (c) => c.notNull())
      .addColumn('port', 'text')
      .addColumn('attempts', 'text', (c) => c.notNull())
      .addColumn('input', 'text')
      .addColumn('output', 'text')
      .addColumn('error', 'text')
      .addColumn('started_at', 'bigint', (c) => c.notNull())
      .addColumn('finished_at', 'bigint')
      .addColumn('duration_ms', 'integer')
      .execute();
    await db.schema
      .createIndex('engine_node_runs_execution_idx')
      .on('engine_node_runs')
      .columns(['execution_id', 'started_at'])
      .execute();
  },
};
