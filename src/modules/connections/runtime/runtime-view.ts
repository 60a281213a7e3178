import { isoTime } from '../../../platform/schemas.js';
import type { RuntimeState } from '../connections/connections.schemas.js';
import { EMPTY_METRICS, type RuntimeMetrics } from './runtime-metrics.js';

export interface RuntimeView {
  connectionId: string;
  state: RuntimeState;
  since: string;
  lastError: string | null;
  ownerReplica: string | null;
  desiredState: 'running' | 'stopped';
  metrics: RuntimeMetrics;
}

/** A `connection_runtime` row as read. */
export interface RuntimeRow {
  state: string;
  since: number;
  last_error: string | null;
  owner_replica: string | null;
  lease_until: number;
  metrics: string | null;
}

/** States that need a live owner: shown as reconnecting once the owner's lease has run out. */
const ORPHANED_STATES = new Set(['connecting', 'connected', 'degraded']);

/**
 * The runtime of a connection as the API shows it: the stored row, with live metrics when this
 * replica runs it (`localMetrics`), else the owner's at its last heartbeat.
 */
export function runtimeView(
  connectionId: string,
  desiredState: 'running' | 'stopped',
  row: RuntimeRow | undefined,
  now: number,
  localMetrics: RuntimeMetrics | undefined,
): RuntimeView {
  // A session whose replica stopped renewing its lease (killed) is not connected, whatever that replica
  // last wrote: it is reconnecting until another replica takes the lease over and says otherwise.
  const orphaned =
    row !== undefined &&
    row.owner_replica !== null &&
    Number(row.lease_until) < now &&
    ORPHANED_STATES.has(row.state);
  return {
    connectionId,
    state: orphaned ? 'reconnecting' : ((row?.state as RuntimeState) ?? 'idle'),
    since: isoTime(row?.since ?? now),
    lastError: orphaned
      ? `replica ${row.owner_replica} stopped renewing its lease; another replica takes the connection over`
      : (row?.last_error ?? null),
    ownerReplica: row?.owner_replica ?? null,
    desiredState,
    metrics: localMetrics ?? (row?.metrics ? (JSON.parse(row.metrics) as RuntimeMetrics) : EMPTY_METRICS),
  };
}
