import type { Duplex } from 'node:stream';
// First: the packages imported below make their `debug` loggers as they load.
import './quiet-debug.js';
import { createServer, type Server } from 'node:net';
import type { Writable } from 'node:stream';
import { Aedes, type AuthenticateError, type Client, type PublishPacket } from 'aedes';
import type { FastifyBaseLogger } from 'fastify';
import type { PublishService } from '../data/publish.service.js';
import type { PublishRecord } from '../data/publish-record.js';
import type { AcceptedRecord } from '../historian/historian-writer.js';
import type { TopicPath } from '../topics/topic-path.js';
import { describeTopicLookalikes } from '../topics/topic-text.js';
import {
  AcknowledgedPublishes,
  type AuthorizeCallback,
  RELAYED_BY_BROKER,
} from './acknowledged-publishes.js';
import {
  type AedesPublish,
  createAedesEmitter,
  emitToSubscriptions,
  replaceAedesPublish,
  watchPersistedSubscriptions,
} from './aedes-internals.js';
import { BatchedWrites } from './batched-writes.js';
import type { BrokerBackend, BrokerStatus } from './broker-types.js';
import { envelopeOf } from './broker-types.js';
import { CommittedRelay, type PendingRelay } from './committed-relay.js';
import type { MessageRates } from './message-rates.js';
import type { TokenAuthenticator } from './mqtt-auth.js';
import { parseMqttPayload } from './mqtt-payload.js';
import {
  admitted,
  brokerClientId,
  type MqttSession,
  namespaceOf,
  SESSION,
  type SessionClient,
  sessionOf,
} from './mqtt-session.js';
import { ForwardedTopics, NamespacedTopics } from './namespaced-topics.js';
import { guardPacketSize, MAX_MQTT_PACKET_BYTES } from './packet-size-guard.js';
import { type SessionWatchDeps, watchMqttSession } from './session-watch.js';
import { isSparkplugTopic, type SparkplugIngress } from './sparkplug-ingress.js';
import { type PrimaryHostSettings, PrimaryHostState } from './sparkplug-state.js';
import { TurnCommits } from './turn-commits.js';

export interface EmbeddedBrokerDeps {
  host: string;
  port: number;
  authenticate: TokenAuthenticator;
  publisher: PublishService;
  topicPrefix: string;
  now: () => number;
  rates: MessageRates;
  log: FastifyBaseLogger;
  /** Re-checks every open session's credential (revocation, expiry, deactivation, membership, suspension). */
  sessionWatch: Omit<SessionWatchDeps, 'authenticate' | 'onError'>;
  /** Takes `spBv1.0/` publishes as a Sparkplug B host application; without it they are refused as not JSON. */
  sparkplug?: SparkplugIngress;
  /** The organizations' Sparkplug primary host ids (their settings), announced as STATE. */
  primaryHost?: PrimaryHostSettings;
}

/** What a start says when the embedded broker's port belongs to another process. */
export const mqttPortTaken = (port: number) =>
  `MQTT port ${port} is taken: choose another with MERIDIAN_MQTT_PORT (0 disables the embedded broker)`;

/**
 * QoS 0 values received and not yet relayed (awaiting their commit or their turn) beyond which the
 * broker stops reading from the clients publishing them until their values are committed.
 */
export const MAX_QOS0_BACKLOG = 10000;

/** A QoS 0 publish awaiting its commit and relay; `held` is aedes' answer while the backlog is full. */
interface Qos0Publish {
  client: Client;
  packet: PublishPacket;
  held: AuthorizeCallback | null;
}

function authError(message: string, returnCode: number): AuthenticateError {
  return Object.assign(new Error(message), { returnCode }) as AuthenticateError;
}

/**
 * Starts the embedded MQTT broker (aedes). CONNECT: username = organization id, password = access
 * token or PAT. PUBLISH needs `uns:publish` and is validated and historized under the HTTP contract
 * before it is relayed (so subscribers only see committed values, and a QoS 1 PUBACK means committed);
 * a refused publish disconnects the client, as MQTT 3.1.1 has no negative acknowledgement. SUBSCRIBE
 * needs `uns:read` and a filter without lookalike characters or mixed scripts (topic-text.ts); a refused
 * subscription gets the failure return code.
 */
/**
 * MQTT 5.0 CONNACK (3.2): packet type 2, remaining length 3, no session present, reason code 0x84
 * (Unsupported Protocol Version), no properties.
 */
const MQTT5_UNSUPPORTED_VERSION_CONNACK = Buffer.from([0x20, 0x03, 0x00, 0x84, 0x00]);

export async function startEmbeddedBroker(deps: EmbeddedBrokerDeps): Promise<BrokerBackend> {
  // A publisher repeats its topics: each distinct one is parsed once.
  const parseOptions = { prefix: deps.topicPrefix, now: deps.now, topics: new Map<string, TopicPath>() };
  let stopped = false;
  // The QoS 0 publish being answered: the broker relays it itself once committed, so aedes' own relay
  // of it, which aedes runs at once from within the answer, is skipped (see broker.publish below).
  let answering: PublishPacket | null = null;
  const answerNow = (packet: PublishPacket, callback: AuthorizeCallback) => {
    answering = packet;
    try {
      callback(null);
    } finally {
      answering = null;
    }
  };
  const namespacedTopics = new NamespacedTopics();
  const forwardedTopics = new ForwardedTopics();
  const batchedWrites = new BatchedWrites();
  let publishNow: AedesPublish = () => {};
  // aedes' emitter of publishes to subscriptions, made as aedes makes it by default and handed to it,
  // so that committed values can be given to it directly.
  const emitter = createAedesEmitter();
  /**
   * Relays a committed value that is not retained as aedes' publish does (its packet, numbered by the
   * broker, with the publisher's id for MQTT 5's no-local, to the emitter), without the series of steps
   * aedes runs around that for every publish: storing a retained message (there is none), and telling
   * its `published` hook and 'publish' listeners (Meridian sets neither). The broker's CPU a historized
   * QoS 0 message went from 9.2-11.1 µs to 7.6-8.0 µs, three alternating runs. A retained value takes
   * aedes' publish, which stores it.
   */
  const emitCommitted = (packet: PublishPacket, client: Client, done: () => void) =>
    emitToSubscriptions(emitter, broker, packet, client.id, done);
  const relay = new CommittedRelay<Qos0Publish>((item, done) => {
    if (stopped) done();
    else if (item.packet.retain) publishNow(item.packet, item.client, done);
    else emitCommitted(item.packet, item.client, done);
    // A publisher held while the backlog was full reads on once its value is relayed (see answer).
    if (item.held) answerNow(item.packet, item.held);
  });
  const publishRefused = (client: Client, error: unknown) => {
    deps.rates.add('refused');
    deps.log.info({ err: error, clientId: client.id }, 'mqtt publish refused');
  };
  const qos0Committed = (entry: PendingRelay<Qos0Publish>) => {
    deps.rates.add('received');
    relay.settle(entry, true);
  };
  const qos0Refused = (entry: PendingRelay<Qos0Publish>, error: unknown) => {
    const { client, held } = entry.item;
    publishRefused(client, error);
    relay.settle(entry, false);
    if (held) held(error as Error);
    else if (!client.closed) client.emit('error', error);
  };
  const turnCommits = new TurnCommits<PendingRelay<Qos0Publish>>({
    commit: (organizationId, accepted) => deps.publisher.commitAccepted(organizationId, accepted),
    committed: qos0Committed,
    refused: qos0Refused,
  });

  const acknowledgedPublishes = new AcknowledgedPublishes({
    publisher: deps.publisher,
    rates: deps.rates,
    refused: publishRefused,
  });

  /**
   * QoS 0 has no acknowledgement, so the connection need not wait for the commit. aedes reads a client's
   * next packets only once every packet of its last read is handled; answering at once lets it read on
   * while the value commits, and the value is relayed once committed, in the order received
   * (CommittedRelay). While MAX_QOS0_BACKLOG values wait (for their commit, or committed for their turn
   * to be relayed), the answer waits until the value is relayed, which stops reading from that client:
   * storage and the subscribers set the pace, as with aedes alone (which reads on once a read's packets
   * are delivered), and memory stays bounded. A refused value disconnects its client, as when aedes is
   * answered with the error.
   */
  const awaitCommit = (client: Client, packet: PublishPacket) => relay.add({ client, packet, held: null });
  // Answered last: aedes may handle the client's next packets from within the answer.
  const answer = (entry: PendingRelay<Qos0Publish>, callback: AuthorizeCallback) => {
    if (relay.backlog > MAX_QOS0_BACKLOG) entry.item.held = callback;
    else answerNow(entry.item.packet, callback);
  };

  const clockNow = deps.sessionWatch.now;
  // Every open session's watch, stopped with its connection or with the broker.
  const watches = new Set<() => void>();
  const watchSession = (client: Client, token: string, remoteAddress: string, session: MqttSession) => {
    const stop = watchMqttSession(
      {
        ...deps.sessionWatch,
        authenticate: deps.authenticate,
        onError: (error) => deps.log.warn({ err: error }, 'mqtt session re-check failed'),
      },
      { token, organizationId: session.identity.organizationId, remoteAddress, identity: session.identity },
      (identity) => {
        session.identity = { ...identity, expiresAt: session.identity.expiresAt };
      },
      (reason) => {
        session.lost = reason;
        watches.delete(stop);
        deps.log.info({ clientId: client.id, reason }, 'mqtt session ended: access is gone');
        client.close();
      },
    );
    watches.add(stop);
    (client.conn as Writable).once('close', () => {
      watches.delete(stop);
      stop();
    });
  };

  /**
   * A Sparkplug B message: its metrics are committed to the UNS first, then it is relayed as it came to
   * the organization's subscribers of `spBv1.0/...` (the acknowledgement of QoS 1 means committed, as for
   * every publish). A rebirth request the host makes goes to the organization's clients as an NCMD.
   */
  const sparkplugPublish = (
    ingress: SparkplugIngress,
    client: Client,
    session: MqttSession,
    packet: PublishPacket,
    callback: AuthorizeCallback,
  ) => {
    const topic = packet.topic;
    if (primaryHost?.isOwnState(session.identity.organizationId, topic)) {
      const error = new Error(`${topic} is Meridian's own primary host state; clients cannot publish it`);
      publishRefused(client, error);
      callback(error);
      return;
    }
    const payload = typeof packet.payload === 'string' ? Buffer.from(packet.payload) : packet.payload;
    const namespace = session.namespace;
    packet.topic = namespacedTopics.of(namespace, topic);
    const send = (commandTopic: string, commandPayload: Uint8Array) => {
      const command = {
        cmd: 'publish',
        topic: namespace + commandTopic,
        payload: Buffer.from(commandPayload),
        qos: 0,
        retain: false,
        dup: false,
      } as PublishPacket;
      publishNow(command, null, () => {});
    };
    ingress.ingest(session.identity.organizationId, topic, payload, send).then(
      () => {
        deps.rates.add('received');
        callback(null);
      },
      (error: unknown) => {
        publishRefused(client, error);
        callback(error as Error);
      },
    );
  };

  const broker = await Aedes.createBroker({
    mq: emitter,
    // The embedded broker speaks MQTT 3.1.1 (and 3.1). An MQTT 5.0 CONNECT is answered as MQTT 5 says
    // (3.1.4): CONNACK with reason code 0x84, unsupported protocol version, then the connection closes
    // (aedes would answer a 3.1.1 CONNACK, return code 1, which MQTT 5 clients misread). The log says
    // which client and what to do, as a client often shows only the number.
    preConnect(client, packet, done) {
      if (packet.protocolVersion !== 5) {
        done(null, true);
        return;
      }
      deps.log.warn(
        {
          clientId: packet.clientId,
          remoteAddress: (client.conn as { remoteAddress?: string }).remoteAddress,
        },
        'mqtt connection refused: client %s speaks MQTT 5.0 and the embedded broker speaks MQTT 3.1.1; ' +
          'connect with MQTT 3.1.1 (mosquitto_pub -V mqttv311; MQTTX: MQTT version 3.1.1), or run an external ' +
          'broker that speaks MQTT 5 and point Meridian at it with MQTT_URL',
        JSON.stringify(packet.clientId),
      );
      (client.conn as Duplex).end(MQTT5_UNSUPPORTED_VERSION_CONNACK);
      done(null, false);
    },
    authenticate(client, username, password, done) {
      if (!username || !password) {
        done(authError('username (organization id) and password (token) are required', 4), null);
        return;
      }
      const remote = (client.conn as { remoteAddress?: string }).remoteAddress ?? 'unknown';
      deps.authenticate(password.toString('utf8'), username, remote).then(
        (identity) => {
          if (typeof identity === 'string') {
            deps.log.info({ clientId: client.id, reason: identity }, 'mqtt connection refused');
            done(authError(identity, 4), null);
            return;
          }
          const session: MqttSession = {
            identity,
            namespace: namespaceOf(identity.organizationId),
            lost: null,
          };
          (client as SessionClient)[SESSION] = session;
          // Client ids are kept apart per organization: the takeover of a session with the same id and
          // the persistent session (clean=false) are the organization's own.
          client.id = brokerClientId(identity.organizationId, client.id);
          // A client closed while authenticating is not watched (aedes ignores the answer).
          if (!client.closed) watchSession(client, password.toString('utf8'), remote, session);
          void primaryHost?.ensure(identity.organizationId, session.namespace);
          void deps.sparkplug?.edge?.ensure(identity.organizationId);
          done(null, true);
        },
        (error: unknown) => {
          deps.log.warn({ err: error }, 'mqtt authentication failed');
          done(authError('authentication is unavailable', 3), null);
        },
      );
    },
    authorizePublish(client, packet, callback) {
      const session = sessionOf(client);
      if (!session) return callback(new Error('not authenticated'));
      const identity = session.identity;
      if (!identity.scopes.has('uns:publish')) return callback(new Error('publishing requires uns:publish'));
      if (!admitted(session, clockNow())) {
        return callback(new Error(session.lost ?? 'the credential has expired'));
      }
      if (deps.sparkplug !== undefined && isSparkplugTopic(packet.topic)) {
        sparkplugPublish(deps.sparkplug, client!, session, packet, callback);
        return;
      }
      let record: PublishRecord;
      try {
        const payload = typeof packet.payload === 'string' ? Buffer.from(packet.payload) : packet.payload;
        record = parseMqttPayload(packet.topic, payload, parseOptions);
      } catch (error) {
        deps.rates.add('refused');
        return callback(error as Error);
      }
      // Judged with the organization's cached bindings when they are (undefined: they are loaded first).
      let accepted: AcceptedRecord | undefined;
      try {
        accepted = deps.publisher.acceptCached(identity.organizationId, record);
      } catch (error) {
        publishRefused(client!, error);
        return callback(error as Error);
      }
      packet.topic = namespacedTopics.of(session.namespace, packet.topic);
      if (packet.qos === 0) {
        const entry = awaitCommit(client!, packet);
        if (accepted !== undefined) {
          // Committed with the other values of this turn (TurnCommits).
          turnCommits.add(identity.organizationId, accepted, entry);
        } else {
          deps.publisher.publish(identity.organizationId, [record], RELAYED_BY_BROKER).then(
            () => qos0Committed(entry),
            (error: unknown) => qos0Refused(entry, error),
          );
        }
        answer(entry, callback);
        return;
      }
      // QoS 1 and 2: the acknowledgement means committed, so aedes acknowledges and relays only then.
      acknowledgedPublishes.add(identity.organizationId, record, accepted, { client: client!, callback });
    },
    authorizeSubscribe(client, subscription, callback) {
      const session = sessionOf(client);
      if (
        !session?.identity.scopes.has('uns:read') ||
        !admitted(session, clockNow()) ||
        subscription.topic.startsWith('$') ||
        // The lookalike rules of every topic and filter (aedes has checked the filter's MQTT form).
        describeTopicLookalikes(subscription.topic) !== null
      ) {
        callback(null, null);
        return;
      }
      // A persistent session's saved subscriptions come back through here on reconnect, already in the
      // organization's namespace (client ids are per organization, so they are its own).
      if (!subscription.topic.startsWith(session.namespace)) {
        subscription.topic = session.namespace + subscription.topic;
      }
      callback(null, subscription);
    },
    authorizeForward(client, packet) {
      const session = sessionOf(client);
      const namespace = session?.namespace;
      if (namespace === undefined || !packet.topic.startsWith(namespace)) return null;
      if (!admitted(session!, clockNow())) return null;
      deps.rates.add('delivered');
      batchedWrites.hold(client.conn as Writable);
      // QoS 0 deliveries are written at once, from the packet answered here, with the topic as bytes.
      if (packet.qos === 0)
        return { ...packet, topic: forwardedTopics.of(packet.topic, namespace.length) as unknown as string };
      // A QoS 1 or 2 one is its delivery's own copy (aedes makes one a subscription, and one an item of
      // a persistent session's queue, apart from what its persistence keeps), and is changed in place:
      // aedes writes a queued one on a session's return from that copy, not from the answer.
      packet.topic = packet.topic.slice(namespace.length);
      return packet;
    },
  });

  // aedes relays a publish it was answered for through its own publish method, at once from within the
  // answer: skipped for the QoS 0 publish being answered, which is relayed once committed (the original
  // runs for it then, with the same packet and client). A mark per packet in a WeakSet cost an
  // ephemeron table insert and delete a message. A committed QoS 1 or 2 publish (not retained) goes
  // to the subscriptions as a QoS 0 one does, when no persistent session has a subscription it would
  // be queued for (aedes' steps for retained messages and offline queues have nothing to do then).
  const nonePersisted = watchPersistedSubscriptions(broker);
  publishNow = replaceAedesPublish(broker, (aedesPublish) => (packet, client, done) => {
    if (packet === answering) {
      answering = null;
      done();
    } else if (
      typeof client === 'object' &&
      client !== null &&
      packet.qos > 0 &&
      !packet.retain &&
      nonePersisted()
    )
      emitCommitted(packet, client, done);
    else aedesPublish(packet, client, done);
  });

  const primaryHost =
    deps.primaryHost &&
    new PrimaryHostState({
      hostIdOf: deps.primaryHost.hostIdOf,
      publishRetained: (topic, payload) =>
        publishNow({ cmd: 'publish', topic, payload, qos: 1, retain: true, dup: false }, null, () => {}),
      now: clockNow,
      onError: (error) => deps.log.warn({ err: error }, 'sparkplug primary host state not announced'),
    });
  const unwatchSettings = deps.primaryHost?.onChange((organizationId) => {
    primaryHost?.changed(organizationId);
    deps.sparkplug?.edge?.changed(organizationId);
  });
  // Meridian's own Sparkplug edge nodes publish into their organization's namespace.
  deps.sparkplug?.edge?.attach((organizationId, topic, payload) =>
    publishNow(
      {
        cmd: 'publish',
        topic: namespaceOf(organizationId) + topic,
        payload: Buffer.from(payload),
        qos: 0,
        retain: false,
        dup: false,
      } as PublishPacket,
      null,
      () => {},
    ),
  );

  const server: Server = createServer((socket) => {
    broker.handle(socket);
    guardPacketSize(socket, MAX_MQTT_PACKET_BYTES, (announced) => {
      deps.log.info(
        { remote: socket.remoteAddress, announced },
        'mqtt packet over the size limit; disconnected',
      );
      socket.destroy();
    });
  });
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

  return {
    status(): BrokerStatus {
      return {
        mode: 'embedded',
        state: stopped ? 'stopped' : 'listening',
        address: `mqtt://${host}:${port}`,
        clients: stopped ? 0 : broker.connectedClients,
        error: null,
      };
    },
    deliver(organizationId, records) {
      const namespace = namespaceOf(organizationId);
      for (const accepted of records) {
        broker.publish(
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
    },
    async stop() {
      if (stopped) return;
      stopped = true;
      unwatchSettings?.();
      primaryHost?.stop();
      deps.sparkplug?.edge?.detach();
      for (const stop of watches) stop();
      watches.clear();
      await new Promise<void>((resolve) => broker.close(() => resolve()));
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
