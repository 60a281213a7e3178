import { type Kysely, sql } from 'kysely';
import type { DialectName } from '../database.js';
import type { MeridianMigration } from '../migrator.js';

/**
 * Compressed segments of the historian (`uns/historian/segments/`): one row a topic and UTC day, the
 * values of that day encoded column by column into `data` (format in `segment-codec.ts`), with the
 * first and last declared timestamp, the number of values and the bytes their rows took, so that reads
 * pick the segments a range overlaps and figures need no decoding. PostgreSQL: here, unpartitioned (a
 * few hundred bytes to kilobytes a topic a day). SQLite: in the historian file, created when it is
 * attached (`historian-layout.ts`), as `uns_values`.
 */
export const unsSegments: MeridianMigration = {
  name: '0026-uns-segments',
  async up(db, dialect) {
    if (dialect === 'postgres') await createSegmentTable(db, dialect, 'uns_segments');
  },
};

/** Creates the segment table `name` (schema-qualified on SQLite) when it does not exist. */
// biome-ignore lint/suspicious/noExplicitAny: migrations run against the schema as it was
export async function createSegmentTable(db: Kysely<any>, dialect: DialectName, name: string): Promise<void> {
  const blob = dialect === 'postgres' ? 'bytea' : 'blob';
  const without = dialect === 'sqlite' ? 'without rowid' : '';
  await sql
    .raw(
      `create table if not exists ${name} (
        topic_id bigint not null,
        day_us bigint not null,
        first_us bigint not null,
        last_us bigint not null,
        value_count integer not null,
        row_bytes bigint not null,
        data ${blob} not null,
        constraint ${name.replace('.', '_')}_pk primary key (topic_id, day_us)) ${without}`,
    )
    .execute(db);
}
