import type { Kysely } from 'kysely';
import { openHistorian } from '../../src/modules/uns/historian/historian-layout.js';
import { decodeSegment, type SegmentRow } from '../../src/modules/uns/historian/segments/segment-codec.js';
import type { Storage } from '../../src/storage/database.js';
import type { Database } from '../../src/storage/tables.js';

/**
 * Writes `series` as rows of `uns_values` for `topicId` straight into the table, as a publish would
 * store them (days created first; a row at a time already stored is replaced, as a later publish does).
 */
export async function insertHistoryRows(
  storage: Storage,
  topicId: number,
  series: readonly SegmentRow[],
  db: Kysely<Database> = storage.db,
): Promise<void> {
  await (await openHistorian(storage)).ensureDays(series.map((r) => r.tsUs));
  const rows = series.map((r) => ({
    topic_id: topicId,
    ts_us: r.tsUs,
    value_json: r.valueJson,
    value_num: typeof JSON.parse(r.valueJson) === 'number' ? Number(r.valueJson) : null,
    quality: r.quality,
    source: r.source,
    received_us: r.receivedUs,
  }));
  for (let i = 0; i < rows.length; i += 500) {
    await db
      .insertInto('uns_values')
      .values(rows.slice(i, i + 500))
      .onConflict((oc) =>
        oc.columns(['topic_id', 'ts_us']).doUpdateSet((eb) => ({
          value_json: eb.ref('excluded.value_json'),
          value_num: eb.ref('excluded.value_num'),
          quality: eb.ref('excluded.quality'),
          source: eb.ref('excluded.source'),
          received_us: eb.ref('excluded.received_us'),
        })),
      )
      .execute();
  }
}

/** Every value of `topicId`'s segments, decoded, day by day. */
export async function segmentValues(db: Kysely<Database>, topicId: number): Promise<SegmentRow[]> {
  const segments = await db
    .selectFrom('uns_segments')
    .selectAll()
    .where('topic_id', '=', topicId)
    .orderBy('day_us')
    .execute();
  return segments.flatMap((s) => decodeSegment(s.data));
}
