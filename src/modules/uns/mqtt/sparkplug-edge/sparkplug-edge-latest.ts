/**
 * What the edge node's births read (sparkplug-edge.ts): the latest values of the topics under a device's
 * prefix.
 */
import type { Kysely } from 'kysely';
import type { Database } from '../../../../storage/tables.js';
import { DataRepository } from '../../reading/data.repository.js';

/** Most metrics a device's birth carries. */
const MAX_DEVICE_METRICS = 10_000;

/** The latest values under `prefix` (the topics below it), for a device's birth. */
export async function sparkplugLatestUnder(
  db: Kysely<Database>,
  settle: () => Promise<void>,
  organizationId: string,
  prefix: string,
): Promise<{ path: string; valueJson: string }[]> {
  // '0' follows '/': the range holds exactly the paths below the prefix.
  const rows = await new DataRepository(db, settle).latestInRange(
    organizationId,
    { exact: null, from: `${prefix}/`, to: `${prefix}0` },
    null,
    MAX_DEVICE_METRICS,
  );
  return rows.map((row) => ({ path: row.path, valueJson: row.value_json }));
}
