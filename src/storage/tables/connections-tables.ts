/**
 * Row types of the tables of one module, as Kysely sees them: Connections, their functions, runtime and state history (0006, 0020, 0024).
 * Times are epoch milliseconds unless said otherwise; booleans are 0/1 integers (see ../tables.ts).
 */

/** A connection to a device or system (see modules/connections). */
export interface ConnectionTable {
  id: string;
  organization_id: string;
  name: string;
  description: string;
  protocol: string;
  /** JSON text: the protocol config without its secret fields. */
  config: string;
  /** The secret config fields, JSON encrypted with the key-encryption key (`v1.<iv>.<tag>.<data>`). */
  secrets: string | null;
  labels: string;
  read_only: number;
  auto_start: number;
  desired_state: 'running' | 'stopped';
  /** Raised by every change; its snapshots are in entity_versions (type `connection`). */
  version: number;
  created_at: number;
  created_by: string | null;
  updated_at: number;
  updated_by: string | null;
}

/** A saved read, write or subscribe operation of a connection. */
export interface ConnectionFunctionTable {
  id: string;
  organization_id: string;
  connection_id: string;
  name: string;
  description: string;
  type: string;
  config: string;
  parameters: string;
  /** JSON text `{ topic, intervalMs }` or null. */
  uns: string | null;
  /** Raised by every change; its snapshots are in entity_versions (type `function`). */
  version: number;
  created_at: number;
  created_by: string | null;
  updated_at: number;
  updated_by: string | null;
}

/** The runtime of a running connection: its state and the lease of the replica that runs it. */
export interface ConnectionRuntimeTable {
  connection_id: string;
  organization_id: string;
  state: string;
  since: number;
  last_error: string | null;
  owner_replica: string | null;
  lease_until: number;
  /** JSON text: the owner's metrics at its last heartbeat. */
  metrics: string | null;
}

/** One state transition of a connection's runtime. */
export interface ConnectionStateEventTable {
  id: string;
  organization_id: string;
  connection_id: string;
  from_state: string;
  to_state: string;
  reason: string;
  error: string | null;
  replica: string | null;
  at: number;
}
