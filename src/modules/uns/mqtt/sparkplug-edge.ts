/**
 * Meridian as a Sparkplug B edge node (Sparkplug 3.0, section 6.4 and 7), per organization and only when
 * its settings name one (`sparkplug.edgeNode`): in the embedded broker, in the organization's namespace,
 * it publishes each configured UNS subtree as a device. NBIRTH carries `bdSeq` and `Node
 * Control/Rebirth`; a DBIRTH per device carries every topic under its prefix with its latest value, an
 * alias and a datatype; each committed value under a prefix goes out as DDATA by alias, and a topic new
 * since the birth makes a rebirth. An NCMD `Node Control/Rebirth` = true makes one too. Writes (any
 * other NCMD or DCMD) go to the write targets the settings name, else are refused, and are audited
 * (sparkplug-edge-writes.ts). A DBIRTH metric whose topic has a schema with a unit carries it as the
 * `engUnit` property (sparkplug-edge-units.ts). When the broker stops, the node's NDEATH (with the
 * birth's `bdSeq`) is published, as a will would be.
 */
import type { FastifyBaseLogger } from 'fastify';
import { encodePayload, type UMetric } from 'sparkplug-payload/lib/sparkplugbpayload.js';
import { decodeSparkplugPayload } from '../../sparkplug/sparkplug-metrics.js';
import { parseSparkplugTopic, SPARKPLUG_NAMESPACE } from '../../sparkplug/sparkplug-topic.js';
import type { CommitJob } from '../historian/historian-writer.js';
import { unitsChanged, withEngUnit } from './sparkplug-edge/sparkplug-edge-units.js';
import {
  type CommandSender,
  type EdgeWriteTarget,
  edgeCommandOf,
  type SparkplugEdgeWrites,
} from './sparkplug-edge/sparkplug-edge-writes.js';

export interface EdgeNodeSettings {
  groupId: string;
  edgeNodeId: string;
  devices: { deviceId: string; prefix: string }[];
  writes?: EdgeWriteTarget[];
}

export interface SparkplugEdgeDeps {
  settingsOf(organizationId: string): Promise<EdgeNodeSettings | null>;
  /** The latest values of the topics under `prefix` (not itself): path and value JSON. */
  latestUnder(organizationId: string, prefix: string): Promise<{ path: string; valueJson: string }[]>;
  now(): number;
  log: FastifyBaseLogger;
  /** The engineering unit of each topic that has one (sparkplug-edge-units.ts). */
  unitsOf?(organizationId: string, topics: readonly string[]): Promise<Map<string, string>>;
  /** Carries out NCMD/DCMD writes; without it commands go to the host (which ignores them). */
  writes?: SparkplugEdgeWrites;
}

/** Publishes into an organization's namespace of the broker (topic without the namespace). */
export type EdgePublish = (organizationId: string, topic: string, payload: Uint8Array) => void;

interface MetricOut {
  alias: number;
  name: string;
  type: 'Double' | 'Boolean' | 'String';
}

interface EdgeState {
  settings: EdgeNodeSettings;
  bdSeq: number;
  seq: number;
  /** Metrics by UNS topic, with their device. */
  metrics: Map<string, MetricOut & { deviceId: string }>;
  /** The units the birth carried, by UNS topic. */
  units: Map<string, string>;
}

const REBIRTH = 'Node Control/Rebirth';
const datatypeOf = (value: unknown): MetricOut['type'] =>
  typeof value === 'number' ? 'Double' : typeof value === 'boolean' ? 'Boolean' : 'String';
/** A value as its datatype carries it: objects and arrays as JSON text. */
const metricValue = (value: unknown, type: MetricOut['type']) =>
  type === 'String' && typeof value !== 'string' ? JSON.stringify(value) : value;

export class SparkplugEdgeNodes {
  readonly #nodes = new Map<string, EdgeState>();
  /** The last bdSeq of each organization's node: the next birth takes the next one. */
  readonly #bdSeqs = new Map<string, number>();
  readonly #pending = new Map<string, Promise<void>>();
  #publish: EdgePublish | null = null;

  constructor(private readonly deps: SparkplugEdgeDeps) {}

  /** The broker started: births go through `publish` from now on. */
  attach(publish: EdgePublish): void {
    this.#publish = publish;
  }

  /** The broker stops: each node's NDEATH, its bdSeq the birth's (tck-id-payloads-ndeath-bdseq). */
  detach(): void {
    for (const organizationId of [...this.#nodes.keys()]) this.#death(organizationId);
    this.#publish = null;
  }

  /** An organization's client connected: its edge node is born, once, if its settings name one. */
  ensure(organizationId: string): Promise<void> {
    if (this.#nodes.has(organizationId)) return Promise.resolve();
    return this.#birth(organizationId);
  }

  /** Its settings changed: the old node dies and the new one (if any) is born. */
  changed(organizationId: string | null): void {
    const ids = organizationId === null ? [...this.#nodes.keys()] : [organizationId];
    for (const id of ids) {
      this.#death(id);
      void this.#birth(id);
    }
  }

  /**
   * A message an organization's client published under `spBv1.0/`: when it is a command to the
   * organization's own edge node, its handling (resolved once its writes are done and audited); null for
   * anything else (the host takes it).
   */
  command(
    organizationId: string,
    topic: string,
    bytes: Uint8Array,
    sender: CommandSender | null = null,
  ): Promise<void> | null {
    const state = this.#nodes.get(organizationId);
    if (!state) return null;
    const parsed = parseSparkplugTopic(topic);
    if ('error' in parsed || parsed.kind === 'state') return null;
    if (parsed.type !== 'NCMD' && parsed.type !== 'DCMD') return null;
    if (parsed.groupId !== state.settings.groupId || parsed.edgeNodeId !== state.settings.edgeNodeId)
      return null;
    let metrics: ReturnType<typeof decodeSparkplugPayload>['metrics'] = [];
    try {
      metrics = decodeSparkplugPayload(bytes).metrics;
    } catch (error) {
      this.deps.log.info({ organizationId, topic, err: error }, 'sparkplug edge node command refused');
      return Promise.resolve();
    }
    const rebirth = metrics.find((m) => m.name === REBIRTH);
    if (parsed.type === 'NCMD' && rebirth?.value === true && metrics.length === 1) {
      void this.#birth(organizationId);
      return Promise.resolve();
    }
    // tck-id-operational-behavior-edge-node-commands: a write goes to its configured target, else is refused.
    const deviceId = parsed.kind === 'device' ? parsed.deviceId : null;
    const command = edgeCommandOf({ type: parsed.type, text: topic, deviceId }, bytes, metrics, [
      ...state.metrics.values(),
    ]);
    return this.deps.writes?.handle(organizationId, command, state.settings.writes ?? [], sender) ?? null;
  }

  /** Schema bindings changed: a rebirth when a born metric's unit is not the one its birth carried. */
  async bindingsChanged(organizationId: string): Promise<void> {
    const state = this.#nodes.get(organizationId);
    if (!state || !this.deps.unitsOf) return;
    const units = await this.deps.unitsOf(organizationId, [...state.metrics.keys()]);
    if (this.#nodes.get(organizationId) === state && unitsChanged(state.units, units))
      await this.#birth(organizationId);
  }

  /** Values committed: those under a device's prefix go out as DDATA; a new topic makes a rebirth. */
  committed(job: CommitJob): void {
    const state = this.#nodes.get(job.organizationId);
    if (!state || !this.#publish) return;
    const byDevice = new Map<string, UMetric[]>();
    let rebirth = false;
    for (const { record } of job.records) {
      if (record.historical) continue;
      const known = state.metrics.get(record.topic);
      if (!known) {
        if (this.#deviceOf(state.settings, record.topic)) rebirth = true;
        continue;
      }
      const metric = {
        alias: known.alias,
        type: known.type,
        value: metricValue(record.value, known.type),
        timestamp: Math.floor(record.timestampUs / 1000),
      } as UMetric;
      if (datatypeOf(record.value) !== known.type && known.type !== 'String') {
        rebirth = true;
        continue;
      }
      const list = byDevice.get(known.deviceId) ?? [];
      list.push(metric);
      byDevice.set(known.deviceId, list);
    }
    const { groupId, edgeNodeId } = state.settings;
    for (const [deviceId, metrics] of byDevice) {
      this.#send(job.organizationId, `${SPARKPLUG_NAMESPACE}/${groupId}/DDATA/${edgeNodeId}/${deviceId}`, {
        timestamp: this.deps.now(),
        seq: this.#nextSeq(state),
        metrics,
      });
    }
    if (rebirth) void this.#birth(job.organizationId);
  }

  #deviceOf(settings: EdgeNodeSettings, topic: string) {
    return settings.devices.find((d) => topic.startsWith(`${d.prefix}/`));
  }

  #nextSeq(state: EdgeState): number {
    const seq = state.seq;
    state.seq = (state.seq + 1) % 256;
    return seq;
  }

  #send(organizationId: string, topic: string, payload: Parameters<typeof encodePayload>[0]): void {
    this.#publish?.(organizationId, topic, encodePayload(payload));
  }

  #death(organizationId: string): void {
    const state = this.#nodes.get(organizationId);
    if (!state) return;
    this.#nodes.delete(organizationId);
    const { groupId, edgeNodeId } = state.settings;
    this.#send(organizationId, `${SPARKPLUG_NAMESPACE}/${groupId}/NDEATH/${edgeNodeId}`, {
      timestamp: this.deps.now(),
      metrics: [{ name: 'bdSeq', type: 'Int64', value: state.bdSeq } as UMetric],
    });
  }

  /** NBIRTH and a DBIRTH per device, one after another per organization. */
  #birth(organizationId: string): Promise<void> {
    const next = (this.#pending.get(organizationId) ?? Promise.resolve())
      .then(() => this.#born(organizationId))
      .catch((error: unknown) =>
        this.deps.log.warn({ err: error, organizationId }, 'sparkplug edge node not born'),
      );
    this.#pending.set(organizationId, next);
    return next;
  }

  async #born(organizationId: string): Promise<void> {
    if (!this.#publish) return;
    const settings = await this.deps.settingsOf(organizationId);
    if (!settings) {
      this.#death(organizationId);
      return;
    }
    const previous = this.#nodes.get(organizationId);
    // A rebirth keeps the session's bdSeq (tck-id-operational-behavior-edge-node-rebirth... same session);
    // a new session takes the next one.
    const bdSeq = previous?.bdSeq ?? ((this.#bdSeqs.get(organizationId) ?? -1) + 1) % 256;
    this.#bdSeqs.set(organizationId, bdSeq);
    const state: EdgeState = { settings, bdSeq, seq: 0, metrics: new Map(), units: new Map() };
    const devices: { deviceId: string; metrics: UMetric[] }[] = [];
    let alias = 0;
    for (const device of settings.devices) {
      const metrics: UMetric[] = [];
      const rows = await this.deps.latestUnder(organizationId, device.prefix);
      const units = await this.deps.unitsOf?.(
        organizationId,
        rows.map((row) => row.path),
      );
      for (const [topic, unit] of units ?? []) state.units.set(topic, unit);
      for (const row of rows) {
        const value = JSON.parse(row.valueJson) as unknown;
        const out: MetricOut = {
          alias: ++alias,
          name: row.path.slice(device.prefix.length + 1),
          type: datatypeOf(value),
        };
        state.metrics.set(row.path, { ...out, deviceId: device.deviceId });
        const metric = { ...out, value: metricValue(value, out.type) } as UMetric;
        metrics.push(withEngUnit(metric, units?.get(row.path)));
      }
      devices.push({ deviceId: device.deviceId, metrics });
    }
    this.#nodes.set(organizationId, state);
    const now = this.deps.now();
    const { groupId, edgeNodeId } = settings;
    // tck-id-payloads-nbirth-seq (seq 0), -bdseq, -rebirth-req (Node Control/Rebirth, Boolean).
    this.#send(organizationId, `${SPARKPLUG_NAMESPACE}/${groupId}/NBIRTH/${edgeNodeId}`, {
      timestamp: now,
      seq: this.#nextSeq(state),
      metrics: [
        { name: 'bdSeq', type: 'Int64', value: bdSeq },
        { name: REBIRTH, type: 'Boolean', value: false },
      ] as UMetric[],
    });
    for (const device of devices) {
      this.#send(
        organizationId,
        `${SPARKPLUG_NAMESPACE}/${groupId}/DBIRTH/${edgeNodeId}/${device.deviceId}`,
        {
          timestamp: now,
          seq: this.#nextSeq(state),
          metrics: device.metrics,
        },
      );
    }
  }
}
