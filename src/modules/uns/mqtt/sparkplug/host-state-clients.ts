/**
 * The primary hosts' STATE in bridge mode (MQTT_URL): each organization's host announced online is an
 * MQTT client of its own on the external broker, held by the `sparkplug-host` lease holder, whose will
 * is the retained offline STATE, so that when the last replica dies the broker says the host offline:
 * - tck-id-host-topic-phid-death-required: the CONNECT carries a will, on `spBv1.0/STATE/<host id>`
 *   (tck-id-host-topic-phid-death-topic) in the organization's namespace;
 * - tck-id-host-topic-phid-death-qos (1), -death-retain (true), -death-payload (`{online:false,timestamp}`);
 * - tck-id-host-topic-phid-birth-payload: the online STATE, retained at QoS 1, carries the timestamp of
 *   the will of its connection; a new connection takes a new timestamp for both;
 * - tck-id-message-flow-hid-sparkplug-state-message-delivered: it subscribes to its own STATE and says
 *   itself online again when it is told it is offline.
 */
import { randomBytes } from 'node:crypto';
import type { FastifyBaseLogger } from 'fastify';
import mqtt, { type IClientOptions, type MqttClient } from 'mqtt';
import { type HostAnnouncer, statePayload } from '../sparkplug-state.js';
import { settledWithin } from './edge-transport.js';

export interface HostStateClientsDeps {
  url: string;
  /** Seconds between keep-alives: the broker publishes a silent client's will after 1.5 times it. */
  keepaliveSeconds: number;
  now(): number;
  log: FastifyBaseLogger;
}

export class HostStateClients implements HostAnnouncer {
  /** The client of each STATE topic announced online. */
  readonly #clients = new Map<string, MqttClient>();
  /** Offline STATEs on their way (a stop waits for them). */
  readonly #closing = new Set<Promise<void>>();

  constructor(private readonly deps: HostStateClientsDeps) {}

  online(organizationId: string, topic: string, timestamp: number): void {
    this.#clients.get(topic)?.end(true);
    let stamp = timestamp;
    const will = (): IClientOptions['will'] => ({
      topic,
      payload: statePayload(false, stamp),
      qos: 1,
      retain: true,
    });
    const client = mqtt.connect(this.deps.url, {
      protocolVersion: 5,
      clientId: `meridian-host-${randomBytes(6).toString('hex')}`,
      clean: true,
      reconnectPeriod: 1000,
      connectTimeout: 5000,
      keepalive: this.deps.keepaliveSeconds,
      will: will(),
    });
    this.#clients.set(topic, client);
    const announce = () => client.publish(topic, statePayload(true, stamp), { qos: 1, retain: true });
    // The broker published the will when the connection was lost: a new one says a new timestamp.
    client.on('reconnect', () => {
      stamp = Math.max(this.deps.now(), stamp + 1);
      client.options.will = will();
    });
    client.on('connect', () => {
      client.subscribe(topic, { qos: 1 }, (error) => {
        if (error) this.deps.log.warn({ err: error, organizationId }, 'sparkplug STATE not subscribed');
        announce();
      });
    });
    client.on('message', (_topic, payload) => {
      const state = JSON.parse(payload.toString()) as { online?: unknown };
      if (state.online === false && this.#clients.get(topic) === client) announce();
    });
    client.on('error', (error) =>
      this.deps.log.warn({ err: error, organizationId }, 'sparkplug primary host client'),
    );
  }

  /** Offline, said at `timestamp` (a clean stop), then a normal DISCONNECT (the will discarded). */
  offline(_organizationId: string, topic: string, timestamp: number): void {
    const client = this.#clients.get(topic);
    if (!client) return;
    this.#clients.delete(topic);
    if (!client.connected) {
      client.end(true);
      return;
    }
    const closing = new Promise<void>((resolve) =>
      client.publish(topic, statePayload(false, timestamp), { qos: 1, retain: true }, () =>
        client.end(false, {}, () => resolve()),
      ),
    );
    this.#closing.add(closing);
    void closing.then(() => this.#closing.delete(closing));
  }

  /** Drops every connection without a DISCONNECT: the broker publishes each will (the lease was lost). */
  abandon(): void {
    for (const client of this.#clients.values()) client.end(true);
    this.#clients.clear();
  }

  /** Resolves once the offline STATEs said are acknowledged and their clients ended (at most `withinMs`). */
  async settled(withinMs = 3000): Promise<void> {
    await settledWithin(this.#closing, withinMs);
  }
}
