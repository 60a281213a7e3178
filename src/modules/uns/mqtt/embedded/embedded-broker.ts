// First: the packages imported below make their `debug` loggers as they load.
import '../quiet-debug.js';
import { createServer, type Server, type Socket } from 'node:net';
import { Aedes } from 'aedes';
import type { BrokerBackend, BrokerStatus } from '../broker-types.js';
import { envelopeOf } from '../broker-types.js';
import { namespaceOf } from '../mqtt-session.js';
import { publishingTransport } from '../sparkplug/edge-transport.js';
import { PrimaryHostState, retainedAnnouncer } from '../sparkplug-state.js';
import { BrokerAdmission, type EmbeddedBrokerDeps } from './broker-admission.js';
import { BrokerPublishes } from './broker-publishes.js';
import { guardPacketSize, MAX_MQTT_PACKET_BYTES } from './packet-size-guard.js';

export type { EmbeddedBrokerDeps } from './broker-admission.js';
export { MAX_QOS0_BACKLOG } from './broker-publishes.js';

/** What a start says when the embedded broker's port belongs to another process. */
export const mqttPortTaken = (port: number) =>
  `MQTT port ${port} is taken: choose another with MERIDIAN_MQTT_PORT (0 disables the embedded broker)`;

/**
 * The embedded MQTT broker (aedes), steered through its hooks: who connects, subscribes and is sent
 * values is BrokerAdmission's; what a publish does (validated and historized under the HTTP contract
 * before it is relayed) is BrokerPublishes'; this class starts and stops aedes and its TCP server, and
 * announces each organization's Sparkplug primary host STATE.
 */
export class EmbeddedBroker implements BrokerBackend {
  private readonly publishes: BrokerPublishes;
  private readonly admission: BrokerAdmission;
  private readonly primaryHost: PrimaryHostState | undefined;
  private unwatchSettings: (() => void) | undefined;
  /** Meridian's own Sparkplug messages on their way to the subscribers (a stop waits for them). */
  private readonly saying = new Set<Promise<void>>();
  private broker: Aedes | undefined;
  private server: Server | undefined;
  private address = '';

  constructor(private readonly deps: EmbeddedBrokerDeps) {
    this.publishes = new BrokerPublishes(
      deps,
      (organizationId, topic) => this.primaryHost?.isOwnState(organizationId, topic) ?? false,
    );
    this.admission = new BrokerAdmission(deps, (organizationId, namespace) => {
      void this.primaryHost?.ensure(organizationId, namespace);
      void deps.sparkplug?.edge?.ensure(organizationId);
    });
    this.primaryHost =
      deps.primaryHost &&
      new PrimaryHostState({
        hostIdOf: deps.primaryHost.hostIdOf,
        announcer: retainedAnnouncer((topic, payload) =>
          this.say({ cmd: 'publish', topic, payload, qos: 1, retain: true, dup: false }),
        ),
        now: deps.sessionWatch.now,
        onError: (error) => deps.log.warn({ err: error }, 'sparkplug primary host state not announced'),
      });
  }

  /** Creates aedes with the hooks, then listens; a port in use fails with `mqttPortTaken`. */
  async start(): Promise<void> {
    const { admission, publishes } = this;
    const broker = await Aedes.createBroker({
      mq: publishes.emitter,
      preConnect: (client, packet, done) => admission.preConnect(client, packet, done),
      authenticate: (client, username, password, done) =>
        admission.authenticate(client, username, password, done),
      authorizePublish: (client, packet, callback) => publishes.authorizePublish(client, packet, callback),
      authorizeSubscribe: (client, subscription, callback) =>
        admission.authorizeSubscribe(client, subscription, callback),
      authorizeForward: (client, packet) => admission.authorizeForward(client, packet),
    });
    this.broker = broker;
    publishes.relayThrough(broker);
    this.unwatchSettings = this.deps.primaryHost?.onChange((organizationId) => {
      this.primaryHost?.changed(organizationId);
      this.deps.sparkplug?.edge?.changed(organizationId);
    });
    // Meridian's own Sparkplug edge nodes publish into their organization's namespace.
    this.deps.sparkplug?.edge?.attach(
      publishingTransport((organizationId, topic, payload) =>
        this.say({
          cmd: 'publish',
          topic: namespaceOf(organizationId) + topic,
          payload: Buffer.from(payload),
          qos: 0,
          retain: false,
          dup: false,
        }),
      ),
    );
    const server = createServer((socket) => this.onConnection(broker, socket));
    this.server = server;
    await this.listen(broker, server);
  }

  status(): BrokerStatus {
    const stopped = this.publishes.stopped;
    return {
      mode: 'embedded',
      state: stopped ? 'stopped' : 'listening',
      address: this.address,
      clients: stopped ? 0 : (this.broker?.connectedClients ?? 0),
      error: null,
    };
  }

  /** Publishes committed values (from HTTP or a device) to the organization's subscribers. */
  deliver(organizationId: string, records: Parameters<BrokerBackend['deliver']>[1]): void {
    const namespace = namespaceOf(organizationId);
    for (const accepted of records) {
      this.broker!.publish(
        {
          cmd: 'publish',
          topic: namespace + accepted.record.topic,
          payload: Buffer.from(envelopeOf(accepted)),
          qos: 0,
          retain: false,
          dup: false,
        },
        () => {},
      );
    }
  }

  async stop(): Promise<void> {
    if (this.publishes.stopped) return;
    this.publishes.stopped = true;
    this.unwatchSettings?.();
    this.primaryHost?.stop();
    this.deps.sparkplug?.edge?.detach();
    await this.said();
    this.admission.stop();
    await new Promise<void>((resolve) => this.broker!.close(() => resolve()));
    await new Promise<void>((resolve) => this.server!.close(() => resolve()));
  }

  /** Publishes a message of Meridian's own (STATE, the edge node's) to the organization's subscribers. */
  private say(packet: Parameters<BrokerPublishes['publishNow']>[0]): void {
    const said = new Promise<void>((resolve) => this.publishes.publishNow(packet, null, () => resolve()));
    this.saying.add(said);
    void said.then(() => this.saying.delete(said));
  }

  /**
   * Waits (at most a second) until what Meridian said is handed to the subscribers' sockets, and two
   * turns more for the batched writes (batched-writes.ts) to reach them: aedes destroys the
   * connections as it closes, and would drop the NDEATH and the offline STATE of a clean stop.
   */
  private async said(): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      Promise.all(this.saying),
      new Promise<void>((resolve) => {
        timer = setTimeout(resolve, 1000);
      }),
    ]);
    clearTimeout(timer);
    for (let turn = 0; turn < 3; turn++) await new Promise<void>((resolve) => setImmediate(resolve));
  }

  private onConnection(broker: Aedes, socket: Socket): void {
    broker.handle(socket);
    guardPacketSize(socket, MAX_MQTT_PACKET_BYTES, (announced) => {
      this.deps.log.info(
        { remote: socket.remoteAddress, announced },
        'mqtt packet over the size limit; disconnected',
      );
      socket.destroy();
    });
  }

  private async listen(broker: Aedes, server: Server): Promise<void> {
    const { deps } = this;
    try {
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(deps.port, deps.host, () => {
          server.off('error', reject);
          resolve();
        });
      });
    } catch (error) {
      await new Promise<void>((resolve) => broker.close(() => resolve()));
      if ((error as NodeJS.ErrnoException).code === 'EADDRINUSE') {
        throw new Error(mqttPortTaken(deps.port));
      }
      throw error;
    }
    const address = server.address();
    const port = typeof address === 'object' && address ? address.port : deps.port;
    const host = deps.host === '0.0.0.0' ? '127.0.0.1' : deps.host;
    this.address = `mqtt://${host}:${port}`;
  }
}

/** Starts the embedded MQTT broker (see EmbeddedBroker). */
export async function startEmbeddedBroker(deps: EmbeddedBrokerDeps): Promise<BrokerBackend> {
  const broker = new EmbeddedBroker(deps);
  await broker.start();
  return broker;
}
