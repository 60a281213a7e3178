import type { AcceptedRecord } from '../historian/historian-writer.js';
import type { LiveChannel } from '../live/live-values.js';
import { formatRfc3339Micros } from '../rfc3339.js';

export type BrokerMode = 'embedded' | 'external' | 'disabled';

/** What `GET /api/v1/uns/broker` reports. */
export interface BrokerStatus {
  mode: BrokerMode;
  state: 'listening' | 'connected' | 'connecting' | 'disconnected' | 'stopped' | 'failed';
  /** `mqtt://host:port` (embedded) or the external URL without its password; null when disabled. */
  address: string | null;
  /** Connected MQTT clients (embedded only). */
  clients: number | null;
  /** Set when the broker could not start or connect. */
  error: string | null;
}

/** A running broker (embedded or bridged): delivers committed values and reports its status. */
export interface BrokerBackend {
  status(): BrokerStatus;
  deliver(organizationId: string, records: readonly AcceptedRecord[]): void;
  stop(): Promise<void>;
  /** Carries committed values between replicas (bridge only: an embedded broker has one process). */
  live?: LiveChannel;
}

/** The MQTT payload of a committed value: the publish envelope, with the quality that was stored. */
export function envelopeOf({ record, quality }: AcceptedRecord): string {
  const source = record.source === null ? '' : `,"source":${JSON.stringify(record.source)}`;
  return `{"value":${record.valueJson},"timestamp":"${formatRfc3339Micros(record.timestampUs)}","quality":${quality}${source}}`;
}
