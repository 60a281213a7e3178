import { sql } from 'kysely';
import type { MeridianMigration } from '../migrator.js';

/**
 * The background rollup job (`uns/rollups/rollup-job.ts`). `uns_rollups` is rebuilt with a field path in its
 * key (rollups of the number at a path inside object values; '' for the value itself): its rows are
 * derived, so they are dropped and rolled up again. `uns_rollup_coverage` says which units of a series
 * (topic, field, unit width) the rows answer for, so that any replica, and a restarted one, reads them
 * without filling; `uns_rollup_late` holds the late values committed into covered units until the job
 * has recomputed them; `job_leases` lets one replica at a time run a job.
 */
export const unsRollupJob: MeridianMigration = {
  name: '0019-uns-rollup-job',
  async up(db) {
    await db.schema.dropTable('uns_rollups').execute();
    await db.schema
      .createTable('uns_rollups')
      .addColumn('topic_id', 'bigint', (c) => c.notNull())
      .addColumn('field', 'text', (c) => c.notNull())
      .addColumn('width_us', 'bigint', (c) => c.notNull())
      .addColumn('start_us', 'bigint', (c) => c.notNull())
      .addColumn('cnt', 'bigint', (c) => c.notNull())
      .addColumn('sum_v', 'double precision', (c) => c.notNull())
      .addColumn('min_v', 'double precision', (c) => c.notNull())
      .addColumn('max_v', 'double precision', (c) => c.notNull())
      .addColumn('first_ts', 'bigint', (c) => c.notNull())
      .addColumn('first_v', 'double precision', (c) => c.notNull())
      .addColumn('last_ts', 'bigint', (c) => c.notNull())
      .addColumn('last_v', 'double precision', (c) => c.notNull())
      .addPrimaryKeyConstraint('uns_rollups_pk', ['topic_id', 'field', 'width_us', 'start_us'])
      .execute();
    await sql`create index uns_rollups_start_idx on uns_rollups (start_us)`.execute(db);
    await db.schema
      .createTable('uns_rollup_coverage')
      .addColumn('topic_id', 'bigint', (c) => c.notNull())
      .addColumn('field', 'text', (c) => c.notNull())
      .addColumn('width_us', 'bigint', (c) => c.notNull())
      .addColumn('from_us', 'bigint', (c) => c.notNull())
      .addColumn('to_us', 'bigint', (c) => c.notNull())
      .addPrimaryKeyConstraint('uns_rollup_coverage_pk', ['topic_id', 'field', 'width_us'])
      .execute();
    await sql`create index uns_rollup_coverage_to_idx on uns_rollup_coverage (to_us)`.execute(db);
    await db.schema
      .createTable('uns_rollup_late')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('organization_id', 'text', (c) => c.notNull())
      .addColumn('path', 'text', (c) => c.notNull())
      .addColumn('from_us', 'bigint', (c) => c.notNull())
      .addColumn('to_us', 'bigint', (c) => c.notNull())
      .addColumn('noted_us', 'bigint', (c) => c.notNull())
      .execute();
    await sql`create index uns_rollup_late_topic_idx on uns_rollup_late (organization_id, path)`.execute(db);
    await db.schema
      .createTable('job_leases')
      .addColumn('name', 'text', (c) => c.primaryKey())
      .addColumn('owner_replica', 'text', (c) => c.notNull())
      .addColumn('lease_until', 'bigint', (c) => c.notNull())
      .execute();
  },
};
