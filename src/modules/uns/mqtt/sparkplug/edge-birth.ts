/**
 * What a birth of Meridian's edge node (sparkplug-edge.ts) carries: per device, every topic under its
 * prefix with its latest value, an alias (numbered across the node's devices) and a datatype, and its
 * engineering unit where a schema gives one (edge-units.ts); and the node's own NBIRTH and NDEATH.
 */
import { encodePayload, type UMetric } from 'sparkplug-payload/lib/sparkplugbpayload.js';
import { SPARKPLUG_NAMESPACE } from '../../../sparkplug/sparkplug-topic.js';
import type { EdgeNodeSettings } from '../sparkplug-edge.js';
import { type BornMetric, datatypeOf, type MetricOut, metricValue } from './edge-metrics.js';
import type { EdgeMessage } from './edge-transport.js';
import { withEngUnit } from './edge-units.js';

/** The metric a host writes to ask for a rebirth. */
export const REBIRTH = 'Node Control/Rebirth';

export interface BirthSources {
  /** The latest values of the topics under `prefix` (not itself): path and value JSON. */
  latestUnder(organizationId: string, prefix: string): Promise<{ path: string; valueJson: string }[]>;
  /** The engineering unit of each topic that has one. */
  unitsOf?(organizationId: string, topics: readonly string[]): Promise<Map<string, string>>;
}

export interface BirthMetrics {
  /** Each device's DBIRTH metrics, in the settings' order. */
  devices: { deviceId: string; metrics: UMetric[] }[];
  /** The born metrics by UNS topic, with their device. */
  metrics: Map<string, BornMetric>;
  /** The units the birth carries, by UNS topic. */
  units: Map<string, string>;
}

/** Reads what the node's devices are born with now. */
export async function birthMetrics(
  sources: BirthSources,
  organizationId: string,
  settings: EdgeNodeSettings,
): Promise<BirthMetrics> {
  const born: BirthMetrics = { devices: [], metrics: new Map(), units: new Map() };
  let alias = 0;
  for (const device of settings.devices) {
    const metrics: UMetric[] = [];
    const rows = await sources.latestUnder(organizationId, device.prefix);
    const units = await sources.unitsOf?.(
      organizationId,
      rows.map((row) => row.path),
    );
    for (const [topic, unit] of units ?? []) born.units.set(topic, unit);
    for (const row of rows) {
      const value = JSON.parse(row.valueJson) as unknown;
      const out: MetricOut = {
        alias: ++alias,
        name: row.path.slice(device.prefix.length + 1),
        type: datatypeOf(value),
      };
      born.metrics.set(row.path, { ...out, deviceId: device.deviceId });
      const metric = { ...out, value: metricValue(value, out.type) } as UMetric;
      metrics.push(withEngUnit(metric, units?.get(row.path)));
    }
    born.devices.push({ deviceId: device.deviceId, metrics });
  }
  return born;
}

/** The NBIRTH's metrics: tck-id-payloads-nbirth-bdseq and -rebirth-req (Node Control/Rebirth, Boolean). */
export const nodeBirthMetrics = (bdSeq: number): UMetric[] =>
  [
    { name: 'bdSeq', type: 'Int64', value: bdSeq },
    { name: REBIRTH, type: 'Boolean', value: false },
  ] as UMetric[];

/** The NDEATH of a session: its bdSeq alone, no seq (tck-id-payloads-ndeath-seq). */
export function nodeDeath(settings: EdgeNodeSettings, bdSeq: number, timestamp: number): EdgeMessage {
  return {
    topic: `${SPARKPLUG_NAMESPACE}/${settings.groupId}/NDEATH/${settings.edgeNodeId}`,
    payload: encodePayload({
      timestamp,
      metrics: [{ name: 'bdSeq', type: 'Int64', value: bdSeq } as UMetric],
    }),
  };
}
