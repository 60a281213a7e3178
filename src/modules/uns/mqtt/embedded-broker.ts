import { createServer, type Server } from 'node:net';
import { Aedes, type AuthenticateError, type Client } from 'aedes';
import type { FastifyBaseLogger } from 'fastify';
import { parseMqttPayload } from '../mqtt-payload.js';
import type { PublishService } from '../publish.service.js';
import type { PublishRecord } from '../publish-record.js';
import type { BrokerBackend, BrokerStatus } from './broker-types.js';
import { envelopeOf } from './broker-types.js';
import type { MessageRates } from './message-rates.js';
import type { MqttIdentity, TokenAuthenticator } from './mqtt-auth.js';
import { guardPacketSize, MAX_MQTT_PACKET_BYTES } from './packet-size-guard.js';

export interface EmbeddedBrokerDeps {
  host: string;
  port: number;
  authenticate: TokenAuthenticator;
  publisher: PublishService;
  topicPrefix: string;
  now: () => number;
  rates: MessageRates;
  log: FastifyBaseLogger;
}

/**
 * Internal topic namespace of an organization. Clients publish and subscribe `v1/...`; the broker maps
 * it to `o/<organization id>/v1/...` and strips it again on delivery, so an organization's clients see
 * only its own topics, whatever filter they subscribe.
 */
export const namespaceOf = (organizationId: string) => `o/${organizationId}/`;

/** An authenticated MQTT connection: who it is, and its organization's namespace. */
interface MqttSession {
  identity: MqttIdentity;
  namespace: string;
}

/** A single publish whose committed value the broker relays itself (no fan-out by the service). */
const RELAYED_BY_BROKER = { batch: false, fanout: false } as const;

function authError(message: string, returnCode: number): AuthenticateError {
  return Object.assign(new Error(message), { returnCode }) as AuthenticateError;
}

/**
 * Starts the embedded MQTT broker (aedes). CONNECT: username = organization id, password = access
 * token or PAT. PUBLISH needs `uns:publish` and is validated and historized under the HTTP contract
 * before it is relayed (so subscribers only see committed values, and a QoS 1 PUBACK means committed);
 * a refused publish disconnects the client, as MQTT 3.1.1 has no negative acknowledgement. SUBSCRIBE
 * needs `uns:read`; a refused subscription gets the failure return code.
 */
export async function startEmbeddedBroker(deps: EmbeddedBrokerDeps): Promise<BrokerBackend> {
  const sessions = new WeakMap<Client, MqttSession>();
  const parseOptions = { prefix: deps.topicPrefix, now: deps.now };
  const broker = await Aedes.createBroker({
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
          sessions.set(client, { identity, namespace: namespaceOf(identity.organizationId) });
          done(null, true);
        },
        (error: unknown) => {
          deps.log.warn({ err: error }, 'mqtt authentication failed');
          done(authError('authentication is unavailable', 3), null);
        },
      );
    },
    authorizePublish(client, packet, callback) {
      const session = client ? sessions.get(client) : undefined;
      if (!session) return callback(new Error('not authenticated'));
      const identity = session.identity;
      if (!identity.scopes.has('uns:publish')) return callback(new Error('publishing requires uns:publish'));
      if (identity.expiresAt !== undefined && identity.expiresAt <= Date.now()) {
        return callback(new Error('the credential has expired'));
      }
      let record: PublishRecord;
      try {
        const payload = typeof packet.payload === 'string' ? Buffer.from(packet.payload) : packet.payload;
        record = parseMqttPayload(packet.topic, payload, parseOptions);
      } catch (error) {
        deps.rates.add('refused');
        return callback(error as Error);
      }
      // Relayed only once committed: subscribers see committed values, a QoS 1 PUBACK means committed.
      // The handlers are written inline: one closure each per message, nothing else allocated for them.
      deps.publisher.publish(identity.organizationId, [record], RELAYED_BY_BROKER).then(
        () => {
          deps.rates.add('received');
          packet.topic = session.namespace + packet.topic;
          callback(null);
        },
        (error: unknown) => {
          deps.rates.add('refused');
          deps.log.info({ err: error, clientId: client?.id }, 'mqtt publish refused');
          callback(error as Error);
        },
      );
    },
    authorizeSubscribe(client, subscription, callback) {
      const session = sessions.get(client);
      if (!session?.identity.scopes.has('uns:read') || subscription.topic.startsWith('$')) {
        callback(null, null);
        return;
      }
      subscription.topic = session.namespace + subscription.topic;
      callback(null, subscription);
    },
    authorizeForward(client, packet) {
      const namespace = sessions.get(client)?.namespace;
      if (namespace === undefined || !packet.topic.startsWith(namespace)) return null;
      deps.rates.add('delivered');
      return { ...packet, topic: packet.topic.slice(namespace.length) };
    },
  });

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
      throw new Error(
        `MQTT port ${deps.port} is taken: choose another with MERIDIAN_MQTT_PORT (0 disables the embedded broker)`,
      );
    }
    throw error;
  }
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : deps.port;
  const host = deps.host === '0.0.0.0' ? '127.0.0.1' : deps.host;
  let stopped = false;

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
      await new Promise<void>((resolve) => broker.close(() => resolve()));
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
