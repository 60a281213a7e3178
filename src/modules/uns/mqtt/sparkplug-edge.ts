/**
 * Meridian as a Sparkplug B edge node (Sparkplug 3.0, section 6.4 and 7), per organization and only when
 * its settings name one (`sparkplug.edgeNode`): in the embedded broker, in the organization's namespace,
 * it publishes each configured UNS subtree as a device. NBIRTH carries `bdSeq` and `Node
 * Control/Rebirth`; a DBIRTH per device carries every topic under its prefix with its latest value, an
 * alias and a datatype; each committed value under a prefix goes out as DDATA by alias, and a topic new
 * since the birth makes a rebirth. An NCMD `Node Control/Rebirth` = true makes one too. Writes (any
 * other NCMD or DCMD) go to the write targets the settings name, else are refused, and are audited
 * (sparkplug/edge-writes.ts). A DBIRTH metric whose topic has a schema with a unit carries it as the
 * `engUnit` property (sparkplug/edge-units.ts). When Meridian stops cleanly, the node's NDEATH (with the
 * birth's `bdSeq`) is published.
 *
 * How the messages reach a broker is the transport's (EdgeTransport): the embedded broker publishes
 * into the organization's namespace; in bridge mode each node has an MQTT client of its own on the
 * external broker whose will is its NDEATH (sparkplug/edge-node-clients.ts).
 */
import type { FastifyBaseLogger } from 'fastify';
import { encodePayload } from 'sparkplug-payload/lib/sparkplugbpayload.js';
import { decodeSparkplugPayload } from '../../sparkplug/sparkplug-metrics.js';
import { parseSparkplugTopic, SPARKPLUG_NAMESPACE } from '../../sparkplug/sparkplug-topic.js';
import type { CommitJob } from '../historian/historian-writer.js';
import type { LiveValue } from '../live/live-values.js';
import { birthMetrics, nodeBirthMetrics, nodeDeath, REBIRTH } from './sparkplug/edge-birth.js';
import { type BornMetric, deviceData, type ValueIn } from './sparkplug/edge-metrics.js';
import type { EdgeTransport } from './sparkplug/edge-transport.js';
import { unitsChanged } from './sparkplug/edge-units.js';
import {
  type CommandSender,
  type EdgeWriteTarget,
  edgeCommandOf,
  type SparkplugEdgeWrites,
} from './sparkplug/edge-writes.js';

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
  /** The engineering unit of each topic that has one (sparkplug/edge-units.ts). */
  unitsOf?(organizationId: string, topics: readonly string[]): Promise<Map<string, string>>;
  /** Carries out NCMD/DCMD writes; without it commands go to the host (which ignores them). */
  writes?: SparkplugEdgeWrites;
}

interface EdgeState {
  settings: EdgeNodeSettings;
  bdSeq: number;
  seq: number;
  /** Metrics by UNS topic, with their device. */
  metrics: Map<string, BornMetric>;
  /** The units the birth carried, by UNS topic. */
  units: Map<string, string>;
}

/** How long a node whose session could not be opened (or was lost) waits before it tries again. */
const RETRY_MS = 1000;

export class SparkplugEdgeNodes {
  readonly #nodes = new Map<string, EdgeState>();
  /** The last bdSeq of each organization's node: the next birth takes the next one. */
  readonly #bdSeqs = new Map<string, number>();
  readonly #pending = new Map<string, Promise<void>>();
  readonly #retries = new Map<string, NodeJS.Timeout>();
  #transport: EdgeTransport | null = null;

  constructor(private readonly deps: SparkplugEdgeDeps) {}

  /** The broker started (or, in bridge mode, this replica took the lease): births go through `transport`. */
  attach(transport: EdgeTransport): void {
    this.#transport = transport;
  }

  /**
   * The broker stops (or the lease is given up): each node's NDEATH, its bdSeq the birth's
   * (tck-id-payloads-ndeath-bdseq), published before its session ends
   * (tck-id-operational-behavior-edge-node-intentional-disconnect-ndeath).
   */
  detach(): void {
    for (const timer of this.#retries.values()) clearTimeout(timer);
    this.#retries.clear();
    for (const organizationId of [...this.#nodes.keys()]) this.#death(organizationId);
    this.#transport = null;
  }

  /**
   * The node's session was lost (bridge mode: the connection closed): the broker published its will,
   * so the node is dead without a word from here; a new session (the next bdSeq) is born shortly.
   */
  lost(organizationId: string): void {
    if (this.#nodes.delete(organizationId)) this.#retry(organizationId);
  }

  /** True for a message of the organization's own edge node (its births, data and the commands to it). */
  isOwn(organizationId: string, topic: string): boolean {
    const state = this.#nodes.get(organizationId);
    if (!state) return false;
    const parsed = parseSparkplugTopic(topic);
    return (
      !('error' in parsed) &&
      parsed.kind !== 'state' &&
      parsed.groupId === state.settings.groupId &&
      parsed.edgeNodeId === state.settings.edgeNodeId
    );
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

  /** Values committed by this process (embedded broker): see `#values`. */
  committed(job: CommitJob): void {
    if (this.#transport?.hears !== 'commits' || !this.#nodes.has(job.organizationId)) return;
    const values = job.records.filter((a) => !a.record.historical).map((a) => a.record);
    this.#values(job.organizationId, values);
  }

  /** Values committed by any replica, heard on the live channel (bridge mode): see `#values`. */
  heard(organizationId: string, values: readonly LiveValue[]): void {
    if (this.#transport?.hears !== 'channel' || !this.#nodes.has(organizationId)) return;
    this.#values(
      organizationId,
      values.map((v) => ({
        topic: v.topic,
        value: (JSON.parse(v.json) as { value: unknown }).value,
        timestampUs: v.timestampUs,
      })),
    );
  }

  /** Values under a device's prefix go out as DDATA; a new topic makes a rebirth. */
  #values(organizationId: string, values: readonly ValueIn[]): void {
    const state = this.#nodes.get(organizationId);
    if (!state || !this.#transport) return;
    const { byDevice, rebirth } = deviceData(state.metrics, state.settings, values);
    const { groupId, edgeNodeId } = state.settings;
    for (const [deviceId, metrics] of byDevice) {
      this.#send(organizationId, `${SPARKPLUG_NAMESPACE}/${groupId}/DDATA/${edgeNodeId}/${deviceId}`, {
        timestamp: this.deps.now(),
        seq: this.#nextSeq(state),
        metrics,
      });
    }
    if (rebirth) void this.#birth(organizationId);
  }

  #nextSeq(state: EdgeState): number {
    const seq = state.seq;
    state.seq = (state.seq + 1) % 256;
    return seq;
  }

  #send(organizationId: string, topic: string, payload: Parameters<typeof encodePayload>[0]): void {
    this.#transport?.publish(organizationId, topic, encodePayload(payload));
  }

  #death(organizationId: string): void {
    const state = this.#nodes.get(organizationId);
    if (!state) return;
    this.#nodes.delete(organizationId);
    const death = nodeDeath(state.settings, state.bdSeq, this.deps.now());
    this.#transport?.publish(organizationId, death.topic, death.payload);
    this.#transport?.close(organizationId);
  }

  /** Births again in a while, once (a session lost, or not opened). */
  #retry(organizationId: string): void {
    if (this.#retries.has(organizationId) || !this.#transport) return;
    const timer = setTimeout(() => {
      this.#retries.delete(organizationId);
      void this.#birth(organizationId);
    }, RETRY_MS);
    timer.unref();
    this.#retries.set(organizationId, timer);
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
    const transport = this.#transport;
    if (!transport) return;
    const settings = await this.deps.settingsOf(organizationId);
    if (!settings) {
      this.#death(organizationId);
      return;
    }
    const previous = this.#nodes.get(organizationId);
    // A rebirth keeps the session's bdSeq (tck-id-payloads-nbirth-bdseq-repeat: the will's of the
    // connection); a new session takes the next one
    // (tck-id-message-flow-edge-node-birth-publish-will-message-payload-bdSeq).
    const bdSeq =
      previous?.bdSeq ?? ((this.#bdSeqs.get(organizationId) ?? transport.firstBdSeq - 1) + 1) % 256;
    this.#bdSeqs.set(organizationId, bdSeq);
    const { devices, metrics, units } = await birthMetrics(this.deps, organizationId, settings);
    const state: EdgeState = { settings, bdSeq, seq: 0, metrics, units };
    if (!previous) {
      try {
        await transport.open(organizationId, settings, nodeDeath(settings, bdSeq, this.deps.now()));
      } catch (error) {
        this.deps.log.warn({ err: error, organizationId }, 'sparkplug edge node session not opened');
        this.#retry(organizationId);
        return;
      }
      if (this.#transport !== transport) return transport.close(organizationId);
    }
    this.#nodes.set(organizationId, state);
    const now = this.deps.now();
    const { groupId, edgeNodeId } = settings;
    // tck-id-payloads-nbirth-seq: seq 0.
    this.#send(organizationId, `${SPARKPLUG_NAMESPACE}/${groupId}/NBIRTH/${edgeNodeId}`, {
      timestamp: now,
      seq: this.#nextSeq(state),
      metrics: nodeBirthMetrics(bdSeq),
    });
    for (const device of devices) {
      const topic = `${SPARKPLUG_NAMESPACE}/${groupId}/DBIRTH/${edgeNodeId}/${device.deviceId}`;
      this.#send(organizationId, topic, {
        timestamp: now,
        seq: this.#nextSeq(state),
        metrics: device.metrics,
      });
    }
  }
}
