// First: the packages imported below make their `debug` loggers as they load.
import './quiet-debug.js';
import { randomBytes } from 'node:crypto';
import type { FastifyBaseLogger } from 'fastify';
import type { Kysely } from 'kysely';
import mqtt from 'mqtt';
import type { InvalidationBus } from '../../../platform/invalidation-bus.js';
import type { Database } from '../../../storage/tables.js';
import { STANDING_TOPICS } from '../../users/access-directory.js';
import type { LiveValue } from '../live/live-values.js';
import type { PublishService } from '../publishing/publish.service.js';
import { type BrokerBackend, type BrokerStatus, envelopeOf } from './broker-types.js';
import { createLiveChannel } from './live-channel.js';
import type { MessageRates } from './message-rates.js';
import { parseMqttPayload } from './mqtt-payload.js';
import { SparkplugBridgeHost } from './sparkplug/sparkplug-bridge.js';
import type { SparkplugIngress } from './sparkplug-ingress.js';
import type { PrimaryHostSettings } from './sparkplug-state.js';

export interface BridgeDeps {
  url: string;
  /** Root of the per-organization namespace on the external broker: `<namespace>/<org id>/v1/...`. */
  namespace: string;
  db: Kysely<Database>;
  /** Evicts the cached status of an organization when it changes, on any replica. */
  bus: InvalidationBus;
  publisher: PublishService;
  topicPrefix: string;
  now: () => number;
  rates: MessageRates;
  log: FastifyBaseLogger;
  /** Where values announced on the live channel go: this process's live streams. */
  deliverLive: (organizationId: string, values: LiveValue[]) => void;
  /** The Sparkplug B host application, run by the replica holding its lease (sparkplug-bridge.ts). */
  sparkplug?: SparkplugIngress;
  primaryHost?: PrimaryHostSettings;
  /** How long the `sparkplug-host` lease lasts without renewal, in ms (MERIDIAN_SPARKPLUG_LEASE). */
  sparkplugLeaseMs: number;
}

/** Marks messages Meridian published itself (already historized), so no replica stores them twice. */
export const HISTORIZED_PROPERTY = 'meridian-historized';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** The external broker URL as shown in status and settings: never its password. */
export function redactUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    return parsed.toString();
  } catch {
    return url;
  }
}

/**
 * Bridge mode (MQTT_URL): Meridian is a client of an external broker (MQTT 5). Each organization owns
 * `<namespace>/<org id>/` there; access to it is the external broker's ACL's job. Meridian takes a
 * shared subscription `$share/<namespace>/<namespace>/+/<prefix>/#`, so among several replicas exactly
 * one historizes each message, and publishes every committed HTTP value under the namespace, marked
 * with the user property `meridian-historized` so that it is not stored again when it comes back.
 * Commits are also announced on the live channel (`live-channel.ts`) for the live streams of every replica.
 */
export async function startBridge(deps: BridgeDeps): Promise<BrokerBackend> {
  const client = mqtt.connect(deps.url, {
    protocolVersion: 5,
    clientId: `meridian-${randomBytes(6).toString('hex')}`,
    reconnectPeriod: 1000,
    connectTimeout: 5000,
    clean: true,
  });
  let lastError: string | null = null;
  let stopped = false;
  const knownOrganizations = new Map<string, boolean>();
  const root = `${deps.namespace}/`;
  const subscription = `$share/${deps.namespace}/${deps.namespace}/+/${deps.topicPrefix}/#`;
  const live = createLiveChannel({
    client,
    namespace: deps.namespace,
    deliver: (organizationId, values) => {
      deps.deliverLive(organizationId, values);
      // The lease holder's edge nodes hear every replica's commits here.
      deps.sparkplug?.edge?.heard(organizationId, values);
    },
    log: deps.log,
  });

  // Whether an organization is active, by id: a suspension, activation or delete evicts it at once.
  const stopEvicting = deps.bus.subscribe((event) => {
    if (event.topic === '*') knownOrganizations.clear();
    else if (event.topic === STANDING_TOPICS.organization && event.id) knownOrganizations.delete(event.id);
  });
  const organizationExists = async (id: string): Promise<boolean> => {
    const known = knownOrganizations.get(id);
    if (known !== undefined) return known;
    const row = await deps.db
      .selectFrom('organizations')
      .select('id')
      .where('id', '=', id)
      .where('status', '=', 'active')
      .executeTakeFirst();
    knownOrganizations.set(id, row !== undefined);
    return row !== undefined;
  };

  const sparkplug = deps.sparkplug
    ? new SparkplugBridgeHost({
        client,
        url: deps.url,
        live,
        leaseMs: deps.sparkplugLeaseMs,
        namespace: deps.namespace,
        db: deps.db,
        ingress: deps.sparkplug,
        primaryHost: deps.primaryHost,
        organizationExists,
        now: () => Date.now(),
        log: deps.log,
      })
    : null;

  client.on('connect', () => {
    lastError = null;
    client.subscribe(subscription, { qos: 1 }, (error) => {
      if (error) {
        lastError = `subscription failed: ${error.message}`;
        deps.log.error({ err: error }, 'mqtt bridge subscription failed');
      }
    });
  });
  client.on('error', (error) => {
    lastError = error.message;
    deps.log.warn({ err: error }, 'mqtt bridge error');
  });
  client.on('message', (topic, payload, packet) => {
    if (live.handle(topic, payload)) return;
    if (sparkplug?.handle(topic, payload)) return;
    if (packet.properties?.userProperties?.[HISTORIZED_PROPERTY] !== undefined) return;
    if (!topic.startsWith(root)) return;
    const rest = topic.slice(root.length);
    const slash = rest.indexOf('/');
    const organizationId = rest.slice(0, slash);
    if (slash < 0 || !UUID.test(organizationId)) return;
    const unsTopic = rest.slice(slash + 1);
    void (async () => {
      try {
        if (!(await organizationExists(organizationId))) return;
        const record = parseMqttPayload(unsTopic, payload, { prefix: deps.topicPrefix, now: deps.now });
        await deps.publisher.publish(organizationId, [record], { batch: false, fanout: false });
        deps.rates.add('received');
      } catch (error) {
        deps.rates.add('refused');
        deps.log.info({ err: error, topic: topic.slice(0, 200) }, 'bridged mqtt message refused');
      }
    })();
  });

  await new Promise<void>((resolve) => {
    // Start-up does not wait for an unreachable broker: the status and /readyz report it meanwhile.
    const timer = setTimeout(resolve, 3000);
    client.once('connect', () => {
      clearTimeout(timer);
      resolve();
    });
  });

  sparkplug?.start();

  return {
    live,
    status(): BrokerStatus {
      let state: BrokerStatus['state'] = 'connecting';
      if (stopped) state = 'stopped';
      else if (client.connected) state = 'connected';
      else if (lastError) state = 'disconnected';
      return { mode: 'external', state, address: redactUrl(deps.url), clients: null, error: lastError };
    },
    deliver(organizationId, records) {
      for (const accepted of records) {
        client.publish(`${root}${organizationId}/${accepted.record.topic}`, envelopeOf(accepted), {
          qos: 0,
          properties: { userProperties: { [HISTORIZED_PROPERTY]: '1' } },
        });
        deps.rates.add('delivered');
      }
    },
    async stop() {
      if (stopped) return;
      stopped = true;
      stopEvicting();
      await sparkplug?.stop();
      await client.endAsync();
    },
  };
}
