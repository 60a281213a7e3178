import { type Kysely, sql } from 'kysely';
import type { DialectName } from '../../../../storage/database.js';
import type { Database } from '../../../../storage/tables.js';
import { HISTORIAN_SCHEMA, STAGED_VALUES } from '../historian-layout.js';

/** A topic with rows to compact, and its oldest such row (epoch µs). */
export interface SeriesToCompact {
  topicId: number;
  firstUs: number;
}

/**
 * SQLite: the topics of `uns_values` one index seek each (its key is topic, time), with the oldest row
 * of each one seek more: a recursive walk from each topic id to the next, as SQLite has no loose index
 * scan. A GROUP BY read every row of the table instead, at every run, also when nothing was left to
 * compact (the usual case between two runs). PostgreSQL prunes the daily partitions to those before the
 * horizon, which compaction empties and truncates (disk-reclaim.ts): what is left there is what to do.
 */
const SQLITE_TOPIC_WALK = sql`with recursive topic(id) as (
    select min(topic_id) from uns_values
    union all
    select (select min(v.topic_id) from uns_values v where v.topic_id > topic.id) from topic
    where topic.id is not null)`;

/** The topics with rows declared before `beforeUs`, each with its oldest such row, by topic. */
export async function seriesBefore(
  db: Kysely<Database>,
  dialect: DialectName,
  beforeUs: number,
): Promise<SeriesToCompact[]> {
  if (dialect === 'sqlite') {
    const { rows } = await sql<{ topic_id: number | string; first_us: number | string }>`
      ${SQLITE_TOPIC_WALK}
      select id as topic_id, (select min(v.ts_us) from uns_values v where v.topic_id = topic.id) as first_us
      from topic where id is not null and first_us < ${beforeUs} order by id`.execute(db);
    return rows.map((r) => ({ topicId: Number(r.topic_id), firstUs: Number(r.first_us) }));
  }
  const rows = await db
    .selectFrom('uns_values')
    .select(['topic_id', (eb) => eb.fn.min('ts_us').as('first_us')])
    .where('ts_us', '<', beforeUs)
    .groupBy('topic_id')
    .orderBy('topic_id')
    .execute();
  return rows.map((r) => ({ topicId: Number(r.topic_id), firstUs: Number(r.first_us) }));
}

/**
 * Whether any row is declared before `beforeUs`: the compaction job's first question, asked on the
 * event loop's connection so that a run with nothing to do starts no thread, takes no lease and waits
 * for no settle (compaction-job.ts). SQLite: the walk above, stopping at the first topic found, and the
 * historian thread's staged rows (a few thousand at most), which `settle` would merge; PostgreSQL: the
 * first row of the partitions before the horizon.
 */
export async function hasRowsBefore(
  db: Kysely<Database>,
  dialect: DialectName,
  beforeUs: number,
): Promise<boolean> {
  if (dialect === 'sqlite') {
    const { rows } = await sql<{ found: number }>`
      ${SQLITE_TOPIC_WALK}
      select 1 as found from topic where id is not null
        and (select min(v.ts_us) from uns_values v where v.topic_id = topic.id) < ${beforeUs}
      union all
      select 1 as found from ${sql.raw(`${HISTORIAN_SCHEMA}.${STAGED_VALUES}`)} where ts_us < ${beforeUs}
      limit 1`.execute(db);
    return rows.length > 0;
  }
  const row = await db
    .selectFrom('uns_values')
    .select('topic_id')
    .where('ts_us', '<', beforeUs)
    .limit(1)
    .executeTakeFirst();
  return row !== undefined;
}
