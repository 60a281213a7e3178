/**
 * Meridian as a Sparkplug B host application (Sparkplug 3.0, sections 5 and 6): the sessions of the edge
 * nodes and devices that publish to it, kept per organization, and what each message means for the UNS.
 * Pure: it is given messages and the time, and answers what to publish and what to send back; the broker
 * wiring does the publishing.
 */
import { encodePayload } from 'sparkplug-payload/lib/sparkplugbpayload.js';
import { decodeSparkplugPayload, type Payload, SparkplugPayloadError } from './sparkplug-metrics.js';
import {
  type DeviceSession,
  type HostOptions,
  type HostOutcome,
  MetricTable,
  type NodeSession,
  type NodeView,
  nodeView,
  nothing,
  refuse,
  stale,
} from './sparkplug-session.js';
import { nodeCommandTopic, parseSparkplugTopic, type SparkplugTopic } from './sparkplug-topic.js';
import { BD_SEQ, dataValues, registerMetrics } from './sparkplug-values.js';

export type { HostOptions, HostOutcome, NodeView, SparkplugValue } from './sparkplug-session.js';

const REBIRTH = 'Node Control/Rebirth';

export class SparkplugHost {
  readonly #sessions = new Map<string, NodeSession>();

  constructor(private readonly options: HostOptions) {}

  /** Takes one message an organization's client published under `spBv1.0/`. */
  receive(organizationId: string, topic: string, bytes: Uint8Array): HostOutcome {
    const parsed = parseSparkplugTopic(topic);
    if ('error' in parsed) return refuse(`${topic}: ${parsed.error}`);
    if (parsed.kind === 'state') return nothing();
    if (parsed.type === 'NCMD' || parsed.type === 'DCMD') return nothing();
    let payload: Payload;
    try {
      payload = decodeSparkplugPayload(bytes);
    } catch (error) {
      if (error instanceof SparkplugPayloadError) return refuse(`${topic}: ${error.message}`);
      throw error;
    }
    return this.#handle(organizationId, parsed, payload);
  }

  /** The edge nodes of an organization, by group and node id. */
  nodes(organizationId: string): NodeView[] {
    const prefix = `${organizationId}\u0000`;
    const views: NodeView[] = [];
    for (const [key, node] of this.#sessions) {
      if (key.startsWith(prefix)) views.push(nodeView(node, this.#nodeTopic(node)));
    }
    return views.sort(
      (a, b) => a.groupId.localeCompare(b.groupId) || a.edgeNodeId.localeCompare(b.edgeNodeId),
    );
  }

  /** Forgets an organization's sessions (the organization was purged). */
  forget(organizationId: string): void {
    const prefix = `${organizationId}\u0000`;
    for (const key of [...this.#sessions.keys()]) if (key.startsWith(prefix)) this.#sessions.delete(key);
  }

  /** Forgets every session (another replica became the host: they are its now). */
  forgetAll(): void {
    this.#sessions.clear();
  }

  #handle(
    organizationId: string,
    topic: Exclude<SparkplugTopic, { kind: 'state' }>,
    payload: Payload,
  ): HostOutcome {
    const key = `${organizationId}\u0000${topic.groupId}\u0000${topic.edgeNodeId}`;
    if (topic.type === 'NBIRTH')
      return this.#countNulls(key, this.#nodeBirth(key, topic.groupId, topic.edgeNodeId, payload));
    const node = this.#sessions.get(key);
    if (topic.type === 'NDEATH') return node ? this.#nodeDeath(node, payload) : nothing();
    if (!node?.online) {
      // Data (or a device message) before the node's birth: ask for one (a primary host does).
      const session = node ?? this.#newSession(key, topic.groupId, topic.edgeNodeId);
      return this.#askRebirth(
        session,
        `${topic.type} from ${topic.groupId}/${topic.edgeNodeId} before its NBIRTH`,
      );
    }
    const problems: string[] = [];
    this.#checkSeq(node, payload, topic.type, problems);
    const outcome = this.#countNulls(key, this.#sessionMessage(node, topic, payload));
    outcome.problems.unshift(...problems);
    if (problems.length > 0 && outcome.command === null) {
      const rebirth = this.#askRebirth(node, problems[0]!);
      outcome.command = rebirth.command;
    }
    return outcome;
  }

  /** A message of a node that is online: its data, or its devices' births, deaths and data. */
  #sessionMessage(
    node: NodeSession,
    topic: Exclude<SparkplugTopic, { kind: 'state' }>,
    payload: Payload,
  ): HostOutcome {
    switch (topic.type) {
      case 'NDATA':
        return this.#data(node, node.metrics, this.#nodeTopic(node), payload);
      case 'DBIRTH':
        return this.#deviceBirth(node, topic.deviceId, payload);
      case 'DDEATH':
        return this.#deviceDeath(node, topic.deviceId, payload);
      case 'DDATA': {
        const device = node.devices.get(topic.deviceId);
        if (!device?.online)
          return this.#askRebirth(node, `DDATA from device ${topic.deviceId} before its DBIRTH`);
        return this.#data(node, device.metrics, `${this.#nodeTopic(node)}/${device.deviceId}`, payload);
      }
      default:
        return nothing();
    }
  }

  /**
   * Counts the metric values sent `is_null` in the node's view (tck-id-payloads-metric-is-null): the UNS
   * keeps no null, so they are not stored, and the topic's latest value stays as it was.
   */
  #countNulls(key: string, outcome: HostOutcome): HostOutcome {
    const node = this.#sessions.get(key);
    if (node) for (const value of outcome.values) if (value.value === null) node.nullValues += 1;
    return outcome;
  }

  #newSession(key: string, groupId: string, edgeNodeId: string): NodeSession {
    const session: NodeSession = {
      groupId,
      edgeNodeId,
      online: false,
      bdSeq: null,
      lastBirthAt: null,
      lastDeathAt: null,
      expectedSeq: null,
      seqErrors: 0,
      nullValues: 0,
      lastRebirthRequestAt: null,
      metrics: new MetricTable(),
      devices: new Map(),
    };
    this.#sessions.set(key, session);
    return session;
  }

  #nodeTopic(node: NodeSession): string {
    return `${this.options.prefix}/${node.groupId}/${node.edgeNodeId}`;
  }

  /** NBIRTH: a new session; every metric registered with its alias, datatype and properties. */
  #nodeBirth(key: string, groupId: string, edgeNodeId: string, payload: Payload): HostOutcome {
    const previous = this.#sessions.get(key);
    const node = this.#newSession(key, groupId, edgeNodeId);
    node.seqErrors = previous?.seqErrors ?? 0;
    node.nullValues = previous?.nullValues ?? 0;
    node.lastRebirthRequestAt = previous?.lastRebirthRequestAt ?? null;
    node.lastDeathAt = previous?.lastDeathAt ?? null;
    const bdSeq = payload.metrics.find((m) => m.name === BD_SEQ);
    // tck-id-payloads-nbirth-bdseq: an NBIRTH carries bdSeq; without it a later NDEATH cannot be matched.
    node.bdSeq = bdSeq === undefined ? null : String(bdSeq.value);
    node.online = true;
    node.lastBirthAt = this.options.now();
    node.expectedSeq = payload.seq === null ? null : (payload.seq + 1) % 256;
    const outcome = this.#register(node.metrics, this.#nodeTopic(node), payload);
    if (bdSeq === undefined)
      outcome.problems.push(`NBIRTH of ${groupId}/${edgeNodeId} without a bdSeq metric`);
    return outcome;
  }

  /**
   * NDEATH: when its bdSeq matches the session's birth, the node and its devices go offline and every
   * metric they registered is stored again, value kept, quality bad, at the host's time
   * (tck-id-operational-behavior-edge-node-termination-host-action-ndeath-node-offline, -node-tags-stale,
   * -devices-offline, -devices-tags-stale). A death of an older session (a will delivered late) changes nothing.
   */
  #nodeDeath(node: NodeSession, payload: Payload): HostOutcome {
    const bdSeq = payload.metrics.find((m) => m.name === BD_SEQ);
    if (!node.online) return nothing();
    if (node.bdSeq !== null && (bdSeq === undefined || String(bdSeq.value) !== node.bdSeq)) {
      return refuse(
        `NDEATH of ${node.groupId}/${node.edgeNodeId} with bdSeq ${bdSeq === undefined ? 'none' : String(bdSeq.value)} is not the session's (${node.bdSeq}): ignored`,
      );
    }
    const now = this.options.now();
    node.online = false;
    node.lastDeathAt = now;
    node.expectedSeq = null;
    const values = stale(node.metrics, now);
    for (const device of node.devices.values()) {
      if (!device.online) continue;
      device.online = false;
      device.lastDeathAt = now;
      values.push(...stale(device.metrics, now));
    }
    return { values, command: null, problems: [] };
  }

  #deviceBirth(node: NodeSession, deviceId: string, payload: Payload): HostOutcome {
    const device: DeviceSession = {
      deviceId,
      online: true,
      lastBirthAt: this.options.now(),
      lastDeathAt: node.devices.get(deviceId)?.lastDeathAt ?? null,
      metrics: new MetricTable(),
    };
    node.devices.set(deviceId, device);
    return this.#register(device.metrics, `${this.#nodeTopic(node)}/${deviceId}`, payload);
  }

  #register(table: MetricTable, base: string, payload: Payload): HostOutcome {
    return { ...registerMetrics(table, base, payload, this.options.now()), command: null };
  }

  /** Data: every metric resolved; one unknown (alias or name) asks for a rebirth. */
  #data(node: NodeSession, table: MetricTable, base: string, payload: Payload): HostOutcome {
    const { values, problems } = dataValues(table, base, payload, this.options.now());
    if (problems.length === 0) return { values, command: null, problems };
    return { values, command: this.#askRebirth(node, problems[0]!).command, problems };
  }

  /** DDEATH: the device's metrics stale at the DDEATH's timestamp (…-ddeath-devices-tags-stale). */
  #deviceDeath(node: NodeSession, deviceId: string, payload: Payload): HostOutcome {
    const device = node.devices.get(deviceId);
    if (!device?.online) return nothing();
    const at = payload.timestamp ?? this.options.now();
    device.online = false;
    device.lastDeathAt = at;
    return { values: stale(device.metrics, at), command: null, problems: [] };
  }

  /** Every message after the birth carries the next seq, 0-255 then 0 again (tck-id-payloads-sequence-num-incrementing). */
  #checkSeq(node: NodeSession, payload: Payload, type: string, problems: string[]): void {
    if (payload.seq === null) {
      node.seqErrors += 1;
      problems.push(`${type} of ${node.groupId}/${node.edgeNodeId} without a seq`);
      return;
    }
    if (node.expectedSeq !== null && payload.seq !== node.expectedSeq) {
      node.seqErrors += 1;
      problems.push(
        `${type} of ${node.groupId}/${node.edgeNodeId} has seq ${payload.seq}, expected ${node.expectedSeq}: messages were lost`,
      );
    }
    node.expectedSeq = (payload.seq + 1) % 256;
  }

  /**
   * An NCMD `Node Control/Rebirth` = true, at most one per `rebirthDebounceMs` to a node. One MQTT session
   * delivers a node's messages in order, so a gap is a loss and the reorder timeout
   * (tck-id-operational-behavior-host-reordering-param) is zero.
   */
  #askRebirth(node: NodeSession, why: string): HostOutcome {
    const now = this.options.now();
    const due =
      node.lastRebirthRequestAt === null || now - node.lastRebirthRequestAt >= this.options.rebirthDebounceMs;
    if (!due) return { values: [], command: null, problems: [why] };
    node.lastRebirthRequestAt = now;
    const payload = encodePayload({
      timestamp: now,
      metrics: [{ name: REBIRTH, type: 'Boolean', value: true }],
    });
    return {
      values: [],
      command: { topic: nodeCommandTopic(node.groupId, node.edgeNodeId), payload },
      problems: [why],
    };
  }
}
