import { sql } from 'kysely';
import type { MeridianMigration } from '../migrator.js';

/**
 * On PostgreSQL, the unique index on executions' idempotency keys holds only the executions that have one
 * (a webhook's, a pipeline run's). The column's unique constraint indexed every row, and an execution
 * without a key is most of them: each of its versions (inserted, claimed, finished) added an entry for
 * its NULL. Conflicts on the key name the index's condition (`on conflict (idempotency_key) where
 * idempotency_key is not null`), which SQLite's unique constraint answers as well; there the constraint
 * stays, as dropping it means rebuilding the table.
 */
export const idempotencyKeysOnly: MeridianMigration = {
  name: '0030-idempotency-keys-only',
  async up(db, dialect) {
    if (dialect !== 'postgres') return;
    await sql`create unique index engine_executions_idempotency_key_uq on engine_executions (idempotency_key) where idempotency_key is not null`.execute(
      db,
    );
    await sql`alter table engine_executions drop constraint engine_executions_idempotency_key_key`.execute(
      db,
    );
  },
};
