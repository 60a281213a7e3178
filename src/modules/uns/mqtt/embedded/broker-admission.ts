import type { Duplex, Writable } from 'node:stream';
import type { AedesPublishPacket, AuthenticateError, Client, ConnectPacket, Subscription } from 'aedes';
import type { FastifyBaseLogger } from 'fastify';
import type { PublishService } from '../../publishing/publish.service.js';
import { describeTopicLookalikes } from '../../topics/topic-text.js';
import type { MessageRates } from '../message-rates.js';
import type { TokenAuthenticator } from '../mqtt-auth.js';
import {
  admitted,
  brokerClientId,
  type MqttSession,
  namespaceOf,
  SESSION,
  type SessionClient,
  sessionOf,
} from '../mqtt-session.js';
import { ForwardedTopics } from '../namespaced-topics.js';
import { type SessionWatchDeps, watchMqttSession } from '../session-watch.js';
import type { SparkplugIngress } from '../sparkplug-ingress.js';
import type { PrimaryHostSettings } from '../sparkplug-state.js';
import { BatchedWrites } from './batched-writes.js';

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

/**
 * MQTT 5.0 CONNACK (3.2): packet type 2, remaining length 3, no session present, reason code 0x84
 * (Unsupported Protocol Version), no properties.
 */
const MQTT5_UNSUPPORTED_VERSION_CONNACK = Buffer.from([0x20, 0x03, 0x00, 0x84, 0x00]);

function authError(message: string, returnCode: number): AuthenticateError {
  return Object.assign(new Error(message), { returnCode }) as AuthenticateError;
}

/**
 * Who may connect, subscribe and be sent values. CONNECT: username = organization id, password = access
 * token or PAT; every open session's credential is re-checked while it lasts. SUBSCRIBE needs `uns:read`
 * and a filter without lookalike characters or mixed scripts (topic-text.ts); a refused subscription
 * gets the failure return code. Deliveries leave the organization's namespace.
 */
export class BrokerAdmission {
  private readonly forwardedTopics = new ForwardedTopics();
  private readonly batchedWrites = new BatchedWrites();
  // Every open session's watch, stopped with its connection or with the broker.
  private readonly watches = new Set<() => void>();

  constructor(
    private readonly deps: EmbeddedBrokerDeps,
    /** A client of the organization connected (its primary host STATE is announced once). */
    private readonly connected: (organizationId: string, namespace: string) => void,
  ) {}

  /**
   * The embedded broker speaks MQTT 3.1.1 (and 3.1). An MQTT 5.0 CONNECT is answered as MQTT 5 says
   * (3.1.4): CONNACK with reason code 0x84, unsupported protocol version, then the connection closes
   * (aedes would answer a 3.1.1 CONNACK, return code 1, which MQTT 5 clients misread). The log says
   * which client and what to do, as a client often shows only the number.
   */
  preConnect(client: Client, packet: ConnectPacket, done: (error: Error | null, ok: boolean) => void): void {
    if (packet.protocolVersion !== 5) {
      done(null, true);
      return;
    }
    this.deps.log.warn(
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
  }

  authenticate(
    client: Client,
    username: Readonly<string> | undefined,
    password: Readonly<Buffer> | undefined,
    done: (error: AuthenticateError | null, success: boolean | null) => void,
  ): void {
    if (!username || !password) {
      done(authError('username (organization id) and password (token) are required', 4), null);
      return;
    }
    const remote = (client.conn as { remoteAddress?: string }).remoteAddress ?? 'unknown';
    this.deps.authenticate(password.toString('utf8'), username, remote).then(
      (identity) => {
        if (typeof identity === 'string') {
          this.deps.log.info({ clientId: client.id, reason: identity }, 'mqtt connection refused');
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
        if (!client.closed) this.watchSession(client, password.toString('utf8'), remote, session);
        this.connected(identity.organizationId, session.namespace);
        done(null, true);
      },
      (error: unknown) => {
        this.deps.log.warn({ err: error }, 'mqtt authentication failed');
        done(authError('authentication is unavailable', 3), null);
      },
    );
  }

  authorizeSubscribe(
    client: Client | null,
    subscription: Subscription,
    callback: (error: Error | null, subscription?: Subscription | null) => void,
  ): void {
    const session = sessionOf(client);
    if (
      !session?.identity.scopes.has('uns:read') ||
      !admitted(session, this.deps.sessionWatch.now()) ||
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
  }

  authorizeForward(client: Client, packet: AedesPublishPacket): AedesPublishPacket | null {
    const session = sessionOf(client);
    const namespace = session?.namespace;
    if (namespace === undefined || !packet.topic.startsWith(namespace)) return null;
    if (!admitted(session!, this.deps.sessionWatch.now())) return null;
    this.deps.rates.add('delivered');
    this.batchedWrites.hold(client.conn as Writable);
    // QoS 0 deliveries are written at once, from the packet answered here, with the topic as bytes.
    if (packet.qos === 0)
      return {
        ...packet,
        topic: this.forwardedTopics.of(packet.topic, namespace.length) as unknown as string,
      };
    // A QoS 1 or 2 one is its delivery's own copy (aedes makes one a subscription, and one an item of
    // a persistent session's queue, apart from what its persistence keeps), and is changed in place:
    // aedes writes a queued one on a session's return from that copy, not from the answer.
    packet.topic = packet.topic.slice(namespace.length);
    return packet;
  }

  /** Stops every session's watch (the broker stops). */
  stop(): void {
    for (const stop of this.watches) stop();
    this.watches.clear();
  }

  private watchSession(client: Client, token: string, remoteAddress: string, session: MqttSession): void {
    const stop = watchMqttSession(
      {
        ...this.deps.sessionWatch,
        authenticate: this.deps.authenticate,
        onError: (error) => this.deps.log.warn({ err: error }, 'mqtt session re-check failed'),
      },
      { token, organizationId: session.identity.organizationId, remoteAddress, identity: session.identity },
      (identity) => {
        session.identity = { ...identity, expiresAt: session.identity.expiresAt };
      },
      (reason) => {
        session.lost = reason;
        this.watches.delete(stop);
        this.deps.log.info({ clientId: client.id, reason }, 'mqtt session ended: access is gone');
        client.close();
      },
    );
    this.watches.add(stop);
    (client.conn as Writable).once('close', () => {
      this.watches.delete(stop);
      stop();
    });
  }
}
