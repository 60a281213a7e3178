import type { Generated } from 'kysely';

/**
 * Row types of the tables of one module, as Kysely sees them: The unified namespace: topics, values, day segments, latest values, rollups, schemas, settings (0003, 0005, 0012, 0019, 0026).
 * Times are epoch milliseconds unless said otherwise; booleans are 0/1 integers (see ../tables.ts).
 */

/** A node of an organization's topic tree; a node that has received values is also a topic. Times in ms. */
export interface UnsTopicTable {
  id: Generated<number>;
  organization_id: string;
  path: string;
  /** Null for a top-level node (`v1/plant`): the version prefix is the root and not a node. */
  parent_path: string | null;
  name: string;
  depth: number;
  description: string | null;
  created_at: number;
}

/** One historized value. Timestamps are epoch microseconds; on SQLite this table lives in the historian file. */
export interface UnsValueTable {
  topic_id: number;
  ts_us: number;
  value_json: string;
  /** The value when it is a number (what aggregation reads), else null. */
  value_num: number | null;
  quality: number;
  source: string | null;
  received_us: number;
}

/** A topic's values of one UTC day, compressed (`uns/historian/segments/`); on SQLite in the historian file. */
export interface UnsSegmentTable {
  topic_id: number;
  /** The UTC day's start, epoch microseconds. */
  day_us: number;
  first_us: number;
  last_us: number;
  value_count: number;
  /** What the values took as rows before (an estimate: their columns' bytes), for figures. */
  row_bytes: number;
  data: Uint8Array;
}

/** The value with the newest declared timestamp of each topic. */
export type UnsLatestTable = UnsValueTable;

/** A topic's numeric values over one unit of time (a minute or an hour), see `uns/rollups/rollups.ts`. */
export interface UnsRollupTable {
  topic_id: number;
  /** The field path inside object values whose numbers are rolled up; '' for the value itself. */
  field: string;
  width_us: number;
  start_us: number;
  cnt: number;
  sum_v: number;
  min_v: number;
  max_v: number;
  first_ts: number;
  first_v: number;
  last_ts: number;
  last_v: number;
}

/** The units [from_us, to_us) of one series (topic, field, unit width) that `uns_rollups` answers for. */
export interface UnsRollupCoverageTable {
  topic_id: number;
  field: string;
  width_us: number;
  from_us: number;
  to_us: number;
}

/** Values committed late (declared before the rollup job's horizon): the job recomputes their units. */
export interface UnsRollupLateTable {
  id: string;
  organization_id: string;
  path: string;
  from_us: number;
  to_us: number;
  noted_us: number;
}

/** A job that one replica at a time runs: who holds it, until when. */
export interface JobLeaseTable {
  name: string;
  owner_replica: string;
  lease_until: number;
}

export interface UnsSchemaTable {
  id: string;
  organization_id: string;
  name: string;
  version: number;
  description: string | null;
  /** JSON text of the validated SchemaVersion. */
  definition: string;
  created_at: number;
  created_by: string | null;
}

export interface UnsSchemaBindingTable {
  id: string;
  organization_id: string;
  filter: string;
  schema_id: string;
  mode: 'normal' | 'strict';
  created_at: number;
  created_by: string | null;
}

export interface UnsViolationTable {
  id: string;
  organization_id: string;
  topic_id: number;
  ts_us: number;
  kind: string;
  message: string;
  received_us: number;
}

/** Settings changed through the API (one row, id 1); they take precedence over the environment. */
export interface UnsSettingsTable {
  id: number;
  retention_days: number | null;
  broker_mode: string | null;
  mqtt_port: number | null;
  /** The URL without its password (which is in mqtt_password_encrypted). */
  mqtt_url: string | null;
  /** The external broker's password, sealed with the key-encryption key (platform/secrets/secret-box.ts). */
  mqtt_password_encrypted: string | null;
  updated_at: number;
  updated_by: string | null;
}
