import type { FastifyBaseLogger } from 'fastify';
import type { MqttClient } from 'mqtt';
import type { LiveChannel, LiveValue } from '../live/live-values.js';
import { parseRfc3339Micros } from '../rfc3339.js';

/** Largest payload of one announcement; a commit with more values is announced in several. */
const MAX_ANNOUNCEMENT_BYTES = 256 * 1024;
/** How long a stream waits for the broker to confirm its organization's subscription. */
const SUBSCRIBE_TIMEOUT_MS = 5000;

export interface LiveChannelDeps {
  client: MqttClient;
  /** Root of Meridian's topics on the external broker (MERIDIAN_MQTT_NAMESPACE). */
  namespace: string;
  /** Where heard values go: this process's live streams. */
  deliver: (organizationId: string, values: LiveValue[]) => void;
  log: FastifyBaseLogger;
}

/** A live channel that also handles the bridge's incoming messages on its topics. */
export interface BridgeLiveChannel extends LiveChannel {
  /** Takes a message when it is an announcement (answers true), otherwise leaves it to the bridge. */
  handle(topic: string, payload: Buffer): boolean;
}

/**
 * The live channel over the external broker. Each commit is announced, by the replica that made it, on
 * `<namespace>/live/<organization id>` as a JSON array of latest-value objects (QoS 0, at most 256 KiB a
 * message). A replica with open streams of an organization holds a plain, not shared, subscription to
 * that topic, so every such replica hears every announcement once, its own included; replicas without
 * streams of it hear nothing. The topic lies outside the shared historian subscription
 * `$share/<ns>/<ns>/+/<prefix>/#` (its third level is an organization id, never the prefix), so nothing
 * announced is historized again.
 */
export function createLiveChannel(deps: LiveChannelDeps): BridgeLiveChannel {
  const root = `${deps.namespace}/live/`;
  const listeners = new Map<string, { count: number; ready: Promise<void> }>();

  const subscribe = (topic: string) =>
    new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        // Also drops it from the client's list of subscriptions to renew after a reconnect.
        deps.client.unsubscribe(topic);
        reject(new Error('the external MQTT broker did not confirm the subscription'));
      }, SUBSCRIBE_TIMEOUT_MS);
      deps.client.subscribe(topic, { qos: 0 }, (error, granted) => {
        clearTimeout(timer);
        if (error) reject(error);
        else if (granted?.some((grant) => grant.qos > 2)) {
          reject(new Error(`the external MQTT broker refused the subscription to ${topic}`));
        } else resolve();
      });
    });

  return {
    announce(organizationId, values) {
      const topic = root + organizationId;
      let chunk: string[] = [];
      let bytes = 2;
      const flush = () => {
        if (chunk.length === 0) return;
        deps.client.publish(topic, `[${chunk.join(',')}]`, { qos: 0 });
        chunk = [];
        bytes = 2;
      };
      for (const value of values) {
        if (bytes + value.json.length > MAX_ANNOUNCEMENT_BYTES) flush();
        chunk.push(value.json);
        bytes += value.json.length + 1;
      }
      flush();
    },

    async listen(organizationId) {
      const topic = root + organizationId;
      let entry = listeners.get(organizationId);
      if (!entry) {
        const ready = subscribe(topic);
        entry = { count: 0, ready };
        listeners.set(organizationId, entry);
        ready.catch(() => {
          if (listeners.get(organizationId) === entry) listeners.delete(organizationId);
        });
      }
      entry.count++;
      const current = entry;
      let released = false;
      const release = () => {
        if (released) return;
        released = true;
        current.count--;
        if (current.count === 0 && listeners.get(organizationId) === current) {
          listeners.delete(organizationId);
          deps.client.unsubscribe(topic);
        }
      };
      try {
        await current.ready;
      } catch (error) {
        released = true;
        current.count--;
        throw error;
      }
      return release;
    },

    handle(topic, payload) {
      if (!topic.startsWith(root)) return false;
      const organizationId = topic.slice(root.length);
      if (!listeners.has(organizationId)) return true;
      try {
        const items = JSON.parse(payload.toString('utf8')) as { topic: string; timestamp: string }[];
        const values = items.map((item) => ({
          topic: item.topic,
          timestampUs: parseRfc3339Micros(item.timestamp, 'timestamp'),
          json: JSON.stringify(item),
        }));
        deps.deliver(organizationId, values);
      } catch (error) {
        deps.log.warn({ err: error, topic }, 'live channel: an announcement could not be read');
      }
      return true;
    },
  };
}
