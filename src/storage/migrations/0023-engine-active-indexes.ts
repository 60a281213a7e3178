import { sql } from 'kysely';
import type { MeridianMigration } from '../migrator.js';

/**
 * The engine's indexes hold only the executions it still has to act on. The claim read queued, waiting
 * and running executions through indexes on `status` that also held every finished execution, and each
 * change of status (queued → running → completed) moved the row's entries in both of them. Partial
 * indexes (SQLite and PostgreSQL) hold queued executions in claim order, waiting ones by when they are
 * due, running ones by when their lease runs out: a finished execution leaves them, and a claim or a
 * finish touches small indexes only. Queries name the status as a literal, so that either planner
 * matches the index's condition.
 */
export const engineActiveIndexes: MeridianMigration = {
  name: '0023-engine-active-indexes',
  async up(db) {
    await db.schema.dropIndex('engine_executions_claim_idx').execute();
    await db.schema.dropIndex('engine_executions_due_idx').execute();
    await db.schema
      .createIndex('engine_executions_queued_idx')
      .on('engine_executions')
      .columns(['priority', 'queued_at'])
      .where(sql.ref('status'), '=', 'queued')
      .execute();
    await db.schema
      .createIndex('engine_executions_waiting_idx')
      .on('engine_executions')
      .column('run_at')
      .where(sql.ref('status'), '=', 'waiting')
      .execute();
    await db.schema
      .createIndex('engine_executions_running_idx')
      .on('engine_executions')
      .column('lease_until')
      .where(sql.ref('status'), '=', 'running')
      .execute();
  },
};
