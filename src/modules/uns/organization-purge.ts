import { type Kysely, type RawBuilder, sql } from 'kysely';
import type { InvalidationBus } from '../../platform/invalidation-bus.js';
import type { Database } from '../../storage/tables.js';
import { topicsDeletedId, UNS_TOPICS } from './uns-invalidation.js';

/** Topic nodes handled per round. */
const TOPICS_PER_ROUND = 500;
/** History or violation rows per DELETE statement: each commits alone and holds its locks briefly. */
const ROWS_PER_SLICE = 5_000;

/** Lets queued I/O (requests, other queries) run: SQLite statements run synchronously on the event loop. */
const yieldToEventLoop = () => new Promise<void>((resolve) => setImmediate(resolve));

/** Runs a DELETE of at most `ROWS_PER_SLICE` rows until it deletes fewer. */
async function deleteInSlices(db: Kysely<Database>, statement: RawBuilder<unknown>): Promise<void> {
  for (;;) {
    const result = await statement.execute(db);
    await yieldToEventLoop();
    if (Number(result.numAffectedRows ?? 0) < ROWS_PER_SLICE) return;
  }
}

/**
 * Deletes every topic node of an organization with its history, latest values and violations, in
 * slices: TOPICS_PER_ROUND nodes a round, their history ROWS_PER_SLICE rows per statement (by the
 * primary key (topic_id, ts_us), on the SQLite historian file and the PostgreSQL partitions alike), so
 * that a history of any size neither holds a long lock nor blocks the event loop. Schemas and bindings
 * are left to the organization row's ON DELETE CASCADE. Run outside a transaction each statement
 * commits alone, and an interrupted purge resumes where it stopped when run again. Answers the number of
 * topic nodes deleted.
 */
export async function purgeOrganizationUns(db: Kysely<Database>, organizationId: string): Promise<number> {
  let deleted = 0;
  for (;;) {
    const rows = await db
      .selectFrom('uns_topics')
      .select('id')
      .where('organization_id', '=', organizationId)
      .orderBy('id')
      .limit(TOPICS_PER_ROUND)
      .execute();
    if (rows.length === 0) return deleted;
    const ids = rows.map((row) => Number(row.id));
    const idList = sql.join(ids);
    await deleteInSlices(
      db,
      sql`delete from uns_values where (topic_id, ts_us) in (
        select topic_id, ts_us from uns_values where topic_id in (${idList}) limit ${ROWS_PER_SLICE})`,
    );
    await deleteInSlices(
      db,
      sql`delete from uns_violations where id in (
        select id from uns_violations where topic_id in (${idList}) limit ${ROWS_PER_SLICE})`,
    );
    await deleteInSlices(
      db,
      sql`delete from uns_rollups where (topic_id, field, width_us, start_us) in (
        select topic_id, field, width_us, start_us from uns_rollups where topic_id in (${idList}) limit ${ROWS_PER_SLICE})`,
    );
    // A segment holds a topic's day (a few kilobytes): one statement a round.
    await db.deleteFrom('uns_segments').where('topic_id', 'in', ids).execute();
    await db.deleteFrom('uns_rollup_coverage').where('topic_id', 'in', ids).execute();
    await db.deleteFrom('uns_latest').where('topic_id', 'in', ids).execute();
    await db.deleteFrom('uns_topics').where('id', 'in', ids).execute();
    deleted += ids.length;
    await yieldToEventLoop();
  }
}

/**
 * Tells every replica that the organization's UNS is gone: the historian writers forget its cached
 * topic ids (so no value is written for a deleted node) and the binding caches drop its bindings.
 */
export async function announceOrganizationUnsDeleted(
  bus: InvalidationBus,
  organizationId: string,
): Promise<void> {
  await bus.publish({ topic: UNS_TOPICS.topicsDeleted, id: topicsDeletedId(organizationId) });
  await bus.publish({ topic: UNS_TOPICS.bindings, id: organizationId });
}
