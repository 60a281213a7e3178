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
 * The topics of `uns_values` one index seek each (its key is topic, time), with the oldest row of each
 * one seek more: a recursive walk from each topic id to the next, as neither database skips through an
 * index by itself. A GROUP BY read every row instead, at every run: on SQLite the whole table, also
 * when nothing was left to compact (the usual case between two runs; 200 topics x 8,640 rows: 92 ms of
 * CPU, and 240 ms with every row old, against 0.8 and 1.2 ms for the walk, at load 28); on PostgreSQL every row of the
 * daily partitions before the horizon (a backlog of 100 topics x 2 days: 725 ms of the database
 * server's CPU against 13-17 ms for the walk, on a loaded machine), CPU taken from the inserts of
 * publishes. PostgreSQL's walk looks only into the partitions before the horizon (`ts_us < beforeUs`
 * prunes the others, and there every row is before it); SQLite's has no partitions, so it walks every
 * topic and keeps those whose oldest row is before the horizon (filtering the walk by time would read
 * a topic's whole history when none of it is old).
 */
function topicWalk(dialect: DialectName, beforeUs: number) {
  const old = dialect === 'postgres' ? sql`and v.ts_us < ${beforeUs}` : sql``;
  return sql`with recursive topic(id) as (
    select min(v.topic_id) from uns_values v where true ${old}
    union all
    select (select min(v.topic_id) from uns_values v where v.topic_id > topic.id ${old}) from topic
    where topic.id is not null)`;
}

/** The topics with rows declared before `beforeUs`, each with its oldest such row, by topic. */
export async function seriesBefore(
  db: Kysely<Database>,
  dialect: DialectName,
  beforeUs: number,
): Promise<SeriesToCompact[]> {
  const { rows } = await sql<{ topic_id: number | string; first_us: number | string }>`
    ${topicWalk(dialect, beforeUs)}
    select topic_id, first_us from (
      select id as topic_id,
        (select min(v.ts_us) from uns_values v where v.topic_id = topic.id and v.ts_us < ${beforeUs}) as first_us
      from topic where id is not null) found
    where first_us is not null order by topic_id`.execute(db);
  return rows.map((r) => ({ topicId: Number(r.topic_id), firstUs: Number(r.first_us) }));
}

/**
 * Whether any row is declared before `beforeUs`: the compaction job's first question, asked on the
 * event loop's connection so that a run with nothing to do starts no thread, takes no lease and waits
 * for no settle (compaction-job.ts). SQLite: the walk above, stopping at the first topic found, and the
 * historian thread's staged rows (a few thousand at most), which `settle` would merge; PostgreSQL: the
 * first row of the partitions before the horizon (those compaction emptied were truncated).
 */
export async function hasRowsBefore(
  db: Kysely<Database>,
  dialect: DialectName,
  beforeUs: number,
): Promise<boolean> {
  if (dialect === 'sqlite') {
    const { rows } = await sql<{ found: number }>`
      ${topicWalk(dialect, beforeUs)}
      select 1 as found from topic where id is not null
        and exists (select 1 from uns_values v where v.topic_id = topic.id and v.ts_us < ${beforeUs})
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
