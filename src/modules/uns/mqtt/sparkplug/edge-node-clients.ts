/**
 * The edge nodes' transport in bridge mode (MQTT_URL): each organization's edge node is an MQTT client
 * of its own on the external broker, under the organization's namespace, whose will is the NDEATH of
 * the birth to come, so that when Meridian's process dies the broker tells the host applications:
 * - tck-id-message-flow-edge-node-birth-publish-will-message: the CONNECT carries a will;
 * - tck-id-message-flow-edge-node-birth-publish-will-message-topic: on `spBv1.0/<group>/NDEATH/<node>`;
 * - tck-id-message-flow-edge-node-birth-publish-will-message-payload-bdSeq: its bdSeq the birth's,
 *   one more with every new connection (a lost connection is a new session: SparkplugEdgeNodes.lost);
 * - tck-id-message-flow-edge-node-birth-publish-will-message-qos (1) and -will-retained (false);
 * - tck-id-message-flow-edge-node-ncmd-subscribe: it subscribes to its NCMD (and DCMD) at QoS 1.
 * It hears the values committed on every replica on the live channel (`hears: 'channel'`).
 */
import { randomBytes } from 'node:crypto';
import type { FastifyBaseLogger } from 'fastify';
import mqtt, { type MqttClient } from 'mqtt';
import { SPARKPLUG_NAMESPACE } from '../../../sparkplug/sparkplug-topic.js';
import type { LiveChannel } from '../../live/live-values.js';
import type { EdgeNodeSettings } from '../sparkplug-edge.js';
import { type EdgeMessage, type EdgeTransport, settledWithin } from './edge-transport.js';

export interface EdgeNodeClientsDeps {
  url: string;
  /** Root of the per-organization namespace on the external broker. */
  namespace: string;
  /** The live channel: the values committed on every replica. */
  live: LiveChannel;
  /** Seconds between keep-alives: the broker publishes a silent client's will after 1.5 times it. */
  keepaliveSeconds: number;
  /** A command to the node (NCMD, DCMD), its topic without the namespace. */
  onCommand(organizationId: string, topic: string, payload: Buffer): void;
  /** The connection was lost (the broker published the will). */
  onLost(organizationId: string): void;
  log: FastifyBaseLogger;
}

interface Session {
  client: MqttClient;
  namespace: string;
  release: () => void;
}

export class EdgeNodeClients implements EdgeTransport {
  readonly hears = 'channel';
  /**
   * A replica's first session starts at a random bdSeq: another replica that ran the node before this
   * one took the lease most likely used others, so a will of its delivered late matches no birth here.
   */
  readonly firstBdSeq = randomBytes(1)[0]!;
  readonly #sessions = new Map<string, Session>();
  /** Connections ending after their NDEATH (a stop waits for them). */
  readonly #closing = new Set<Promise<void>>();

  constructor(private readonly deps: EdgeNodeClientsDeps) {}

  async open(organizationId: string, settings: EdgeNodeSettings, death: EdgeMessage): Promise<void> {
    this.close(organizationId);
    const namespace = `${this.deps.namespace}/${organizationId}/`;
    const client = mqtt.connect(this.deps.url, {
      protocolVersion: 5,
      clientId: `meridian-edge-${randomBytes(6).toString('hex')}`,
      clean: true,
      reconnectPeriod: 0,
      connectTimeout: 5000,
      keepalive: this.deps.keepaliveSeconds,
      will: { topic: namespace + death.topic, payload: Buffer.from(death.payload), qos: 1, retain: false },
    });
    client.on('error', (error) =>
      this.deps.log.warn({ err: error, organizationId }, 'sparkplug edge client'),
    );
    try {
      await new Promise<void>((resolve, reject) => {
        client.once('connect', () => resolve());
        client.once('close', () => reject(new Error('the external MQTT broker closed the connection')));
      });
      const node = `${namespace}${SPARKPLUG_NAMESPACE}/${settings.groupId}`;
      await client.subscribeAsync(
        [`${node}/NCMD/${settings.edgeNodeId}`, `${node}/DCMD/${settings.edgeNodeId}/+`],
        { qos: 1 },
      );
    } catch (error) {
      client.end(true);
      throw error;
    }
    const release = await this.deps.live.listen(organizationId).catch((error: unknown) => {
      client.end(true);
      throw error;
    });
    const session: Session = { client, namespace, release };
    this.#sessions.set(organizationId, session);
    client.on('message', (topic, payload) => {
      if (topic.startsWith(namespace))
        this.deps.onCommand(organizationId, topic.slice(namespace.length), payload);
    });
    client.on('close', () => {
      if (this.#sessions.get(organizationId) !== session) return;
      this.#drop(organizationId, session, true);
      this.deps.onLost(organizationId);
    });
  }

  publish(organizationId: string, topic: string, payload: Uint8Array): void {
    const session = this.#sessions.get(organizationId);
    session?.client.publish(session.namespace + topic, Buffer.from(payload), { qos: 0 });
  }

  /** After the NDEATH published on it: a normal DISCONNECT, so the broker discards the will. */
  close(organizationId: string): void {
    const session = this.#sessions.get(organizationId);
    if (session) this.#drop(organizationId, session, false);
  }

  /**
   * Drops every connection without a DISCONNECT, so that the broker publishes each will (this replica
   * lost the lease: another may have born the nodes already, and a will's older bdSeq changes nothing).
   */
  abandon(): void {
    for (const [organizationId, session] of this.#sessions) this.#drop(organizationId, session, true);
  }

  /** Resolves once the connections closed normally have ended (at most `withinMs`). */
  async settled(withinMs = 3000): Promise<void> {
    await settledWithin(this.#closing, withinMs);
  }

  #drop(organizationId: string, session: Session, force: boolean): void {
    this.#sessions.delete(organizationId);
    session.release();
    const closing = new Promise<void>((resolve) => session.client.end(force, {}, () => resolve()));
    this.#closing.add(closing);
    void closing.then(() => this.#closing.delete(closing));
  }
}
