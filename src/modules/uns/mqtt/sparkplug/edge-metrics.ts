/**
 * The metrics of Meridian's edge node (sparkplug-edge.ts): each UNS topic under a device's prefix is a
 * metric with an alias and a datatype from its value, and committed values become DDATA by alias.
 */
import type { UMetric } from 'sparkplug-payload/lib/sparkplugbpayload.js';
import type { EdgeNodeSettings } from '../sparkplug-edge.js';

export interface MetricOut {
  alias: number;
  name: string;
  type: 'Double' | 'Boolean' | 'String';
}

/** A metric of a birth, by UNS topic, with its device. */
export type BornMetric = MetricOut & { deviceId: string };

/** A committed value as the edge node takes it. */
export interface ValueIn {
  topic: string;
  value: unknown;
  timestampUs: number;
}

/** The datatype a value is born with: numbers `Double`, booleans `Boolean`, anything else `String`. */
export const datatypeOf = (value: unknown): MetricOut['type'] =>
  typeof value === 'number' ? 'Double' : typeof value === 'boolean' ? 'Boolean' : 'String';

/** A value as its datatype carries it: objects and arrays as JSON text. */
export const metricValue = (value: unknown, type: MetricOut['type']) =>
  type === 'String' && typeof value !== 'string' ? JSON.stringify(value) : value;

/** The device whose prefix holds `topic`, if any. */
export const deviceOf = (settings: EdgeNodeSettings, topic: string) =>
  settings.devices.find((d) => topic.startsWith(`${d.prefix}/`));

/**
 * The DDATA metrics of committed values, by device (tck-id-payloads-alias-data-cmd-requirement: by
 * alias), and whether a rebirth is due: a topic under a prefix that the birth did not carry, or a value
 * whose datatype is no longer the birth's.
 */
export function deviceData(
  born: ReadonlyMap<string, BornMetric>,
  settings: EdgeNodeSettings,
  values: readonly ValueIn[],
): { byDevice: Map<string, UMetric[]>; rebirth: boolean } {
  const byDevice = new Map<string, UMetric[]>();
  let rebirth = false;
  for (const record of values) {
    const known = born.get(record.topic);
    if (!known) {
      if (deviceOf(settings, record.topic)) rebirth = true;
      continue;
    }
    if (datatypeOf(record.value) !== known.type && known.type !== 'String') {
      rebirth = true;
      continue;
    }
    const list = byDevice.get(known.deviceId) ?? [];
    list.push({
      alias: known.alias,
      type: known.type,
      value: metricValue(record.value, known.type),
      timestamp: Math.floor(record.timestampUs / 1000),
    } as UMetric);
    byDevice.set(known.deviceId, list);
  }
  return { byDevice, rebirth };
}
