/**
 * What the Sparkplug B host keeps of each edge node and device between messages (its session), and what
 * one message makes of it (values for the UNS, a command back).
 */
import type { JsonValue, Metric } from './sparkplug-metrics.js';

/** A value for the UNS, from a metric. */
export interface SparkplugValue {
  topic: string;
  value: JsonValue;
  /** Epoch milliseconds. */
  timestamp: number;
  /** 0 good, 2 bad (the node or device died; the value is the last one it sent). */
  quality: 0 | 2;
  /** An `is_historical` metric: stored in history, never the latest value. */
  historical: boolean;
}

/** What one message asks of Meridian. */
export interface HostOutcome {
  values: SparkplugValue[];
  /** An NCMD asking the node for a rebirth, to publish at QoS 0 (tck-id-operational-behavior-host-reordering-rebirth). */
  command: { topic: string; payload: Uint8Array } | null;
  /** Why the message, or part of it, was not taken (for the log and the node's view). */
  problems: string[];
}

export interface HostOptions {
  /** The UNS prefix (`MERIDIAN_UNS_TOPIC_PREFIX`), e.g. `v1`. */
  prefix: string;
  /** Least time between two rebirth requests to one node. */
  rebirthDebounceMs: number;
  now: () => number;
}

export interface MetricState {
  name: string;
  datatype: string;
  topic: string;
  properties: Record<string, JsonValue>;
  /** The last value sent, kept when the node or device dies. */
  value: JsonValue;
  hasValue: boolean;
}

/** The metrics a birth registered, by name and by alias. */
export class MetricTable {
  readonly byName = new Map<string, MetricState>();
  readonly byAlias = new Map<string, MetricState>();

  resolve(metric: Metric): MetricState | undefined {
    if (metric.alias !== null) {
      const known = this.byAlias.get(metric.alias);
      if (known) return known;
    }
    return metric.name === null ? undefined : this.byName.get(metric.name);
  }
}

export interface DeviceSession {
  deviceId: string;
  online: boolean;
  lastBirthAt: number | null;
  lastDeathAt: number | null;
  metrics: MetricTable;
}

export interface NodeSession {
  groupId: string;
  edgeNodeId: string;
  online: boolean;
  bdSeq: string | null;
  lastBirthAt: number | null;
  lastDeathAt: number | null;
  /** The seq the next message must carry; null before a birth. */
  expectedSeq: number | null;
  seqErrors: number;
  /** Metric values of the node and its devices sent `is_null`: the UNS keeps no null, so only counted. */
  nullValues: number;
  lastRebirthRequestAt: number | null;
  metrics: MetricTable;
  devices: Map<string, DeviceSession>;
}

/** An edge node as `GET /uns/sparkplug/nodes` shows it. */
export interface NodeView {
  groupId: string;
  edgeNodeId: string;
  /** Where its metrics are in the UNS (`v1/<group>/<node>`). */
  topic: string;
  online: boolean;
  lastBirthAt: number | null;
  lastDeathAt: number | null;
  bdSeq: string | null;
  seqErrors: number;
  nullValues: number;
  metrics: number;
  devices: {
    deviceId: string;
    topic: string;
    online: boolean;
    lastBirthAt: number | null;
    metrics: number;
  }[];
}

export function stale(table: MetricTable, at: number): SparkplugValue[] {
  const values: SparkplugValue[] = [];
  for (const state of table.byName.values()) {
    // A metric whose last value was null has nothing the UNS could mark bad.
    if (!state.hasValue || state.value === null) continue;
    values.push({ topic: state.topic, value: state.value, timestamp: at, quality: 2, historical: false });
  }
  return values;
}

export function nothing(): HostOutcome {
  return { values: [], command: null, problems: [] };
}

export function refuse(problem: string): HostOutcome {
  return { values: [], command: null, problems: [problem] };
}

/** A node's session as the node view shows it (`GET /api/v1/uns/sparkplug/nodes`); `topic` is where its metrics are. */
export function nodeView(node: NodeSession, topic: string): NodeView {
  return {
    groupId: node.groupId,
    edgeNodeId: node.edgeNodeId,
    topic,
    online: node.online,
    lastBirthAt: node.lastBirthAt,
    lastDeathAt: node.lastDeathAt,
    bdSeq: node.bdSeq,
    seqErrors: node.seqErrors,
    nullValues: node.nullValues,
    metrics: node.metrics.byName.size,
    devices: [...node.devices.values()]
      .map((d) => ({
        deviceId: d.deviceId,
        topic: `${topic}/${d.deviceId}`,
        online: d.online,
        lastBirthAt: d.lastBirthAt,
        metrics: d.metrics.byName.size,
      }))
      .sort((a, b) => a.deviceId.localeCompare(b.deviceId)),
  };
}
