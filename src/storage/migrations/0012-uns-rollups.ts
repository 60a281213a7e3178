import { sql } from 'kysely';
import type { MeridianMigration } from '../migrator.js';

/**
 * Rollups of the historian: per topic and unit of time (a minute, five minutes or an hour, `width_us`), the count,
 * sum, min and max of its numeric values and the first and last of them with their timestamps. Filled
 * lazily by the dashboard query (`uns/rollups/rollups.ts`), refreshed when a value lands in a rolled-up
 * unit, dropped with their values by retention and topic deletes. Kept in the main database (on SQLite
 * beside, not inside, the historian file): nothing on the publish path writes it.
 */
export const unsRollups: MeridianMigration = {
  name: '0012-uns-rollups',
  async up(db) {
    await db.schema
      .createTable('uns_rollups')
      .addColumn('topic_id', 'bigint', (c) => c.notNull())
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
      .addPrimaryKeyConstraint('uns_rollups_pk', ['topic_id', 'width_us', 'start_us'])
      .execute();
    // Retention deletes by time across topics.
    await sql`create index uns_rollups_start_idx on uns_rollups (start_us)`.execute(db);
  },
};
