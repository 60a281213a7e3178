import type { Storage } from '../../../storage/database.js';
import type { UnsValueTable } from '../../../storage/tables.js';
import { CONFLICT, columnArrays, copyText, unnestSelect, VALUE_COLUMNS } from './value-upsert.js';

/**
 * Fewest history rows a commit sends by COPY; smaller ones go in one statement (one-statement-commit.ts),
 * which costs PostgreSQL less for them than a transaction around COPY: MQTT QoS 0 on PostgreSQL (commits
 * of about 1,000 values) ran 0.75-0.84x of aedes with this at 5,000, 0.70-0.80x at 1,000 and 0.68-0.76x
 * at 100, alternating runs.
 */
export const COPY_ROWS = 5000;

const COPY_HISTORY = `copy uns_values ${VALUE_COLUMNS} from stdin`;
// Named prepared statement: PostgreSQL parses and plans it once per connection.
const UPSERT_LATEST = {
  name: 'meridian_historian_latest_v1',
  text: `insert into uns_latest ${VALUE_COLUMNS} ${unnestSelect(1)} ${CONFLICT.uns_latest}`,
};

/**
 * PostgreSQL: commits history rows (sorted, unique by topic and time, on known topics) by COPY, and the
 * newest row of each topic as latest values, in one transaction. COPY has no conflict clause: when a
 * row meets a stored value of the same topic and time, this rejects with unique_violation having stored
 * nothing, and the caller upserts instead. Batch publishes of 10,000 values (bench/uns/batch-publish):
 * PostgreSQL's CPU per value was 3.7-4.7 µs with the insert reading array parameters, and 2.8-3.6 µs
 * by COPY, where the bare COPY of the same rows took 2.2-3.4 µs in the same runs.
 */
export function commitByCopy(
  copy: NonNullable<Storage['pgCopy']>,
  history: readonly UnsValueTable[],
  latest: readonly UnsValueTable[],
): Promise<void> {
  return copy(COPY_HISTORY, copyText(history), { ...UPSERT_LATEST, values: columnArrays(latest) });
}
