// First: aedes loads mqtt-packet, which makes its `debug` loggers as it loads.
import '../quiet-debug.js';
import type { Aedes, Client, PublishPacket } from 'aedes';
import aedesPacket from 'aedes-packet';
import mqemitter from 'mqemitter';

/**
 * What the embedded broker takes from aedes beyond its documented options and hooks, in one place:
 * aedes-internals.test.ts holds each of these to the aedes (and aedes-packet, mqemitter) installed, so an
 * upgrade that changes them fails there first.
 */

/** aedes' packet of a publish on its way to the subscribers (its type declarations leave out the constructor). */
export const BrokerPacket = aedesPacket as unknown as new (
  packet: PublishPacket,
  broker: Aedes,
) => PublishPacket & { clientId?: string; brokerId?: string; brokerCounter?: number };

/** How many deliveries aedes' emitter runs at once: aedes' default. */
export const EMITTER_CONCURRENCY = 100;

/** aedes' publish as it runs (its type declarations leave out the publishing client). */
export type AedesPublish = (
  packet: PublishPacket,
  client: Client | null,
  done: (error?: Error) => void,
) => void;

/**
 * aedes' emitter of publishes to subscriptions, made as aedes makes it by default; handed to aedes as its
 * `mq` option, so that committed values can be given to it directly (emitToSubscriptions).
 */
export function createAedesEmitter(): mqemitter.MQEmitter {
  const emitter = mqemitter({ concurrency: EMITTER_CONCURRENCY, matchEmptyLevels: true });
  cacheTopicSplits((emitter as unknown as { _matcher: QlobberSplits })._matcher, SPLIT_TOPICS_CACHED);
  return emitter;
}

/** Distinct topics whose split into levels the emitter's matcher keeps (the oldest is dropped first). */
export const SPLIT_TOPICS_CACHED = 10_000;

/** qlobber's cache of `topic.split(separator)`, which its `cache_splits` option makes. */
interface QlobberSplits {
  _split_cache?: Map<string, string[]>;
  _cache_splits?: number;
}

/**
 * Turns on qlobber's own cache of topic splits (its `cache_splits` option, which mqemitter does not pass
 * on): every publish is matched against the subscriptions after splitting its topic into levels, and a
 * plant publishes the same topics over and over. Splitting a namespaced topic was 0.5 µs of the event
 * loop a message in the MQTT bench (Qlobber._split_words, 4% of the broker's busy time); the split
 * arrays are only read by the matcher.
 */
function cacheTopicSplits(matcher: QlobberSplits, size: number): void {
  matcher._cache_splits = size;
  matcher._split_cache = new Map();
}

/**
 * Gives a publish to the subscriptions as aedes' publish does at its end: its packet, numbered by the
 * broker, with the publisher's id (MQTT 5's no-local), to the emitter.
 */
export function emitToSubscriptions(
  emitter: mqemitter.MQEmitter,
  broker: Aedes,
  packet: PublishPacket,
  clientId: string,
  done: () => void,
): void {
  const forwarded = new BrokerPacket(packet, broker);
  forwarded.clientId = clientId;
  emitter.emit(forwarded as unknown as mqemitter.Message, done);
}

/**
 * Replaces aedes' publish method, through which aedes relays a publish it was answered for
 * (authorizePublish), at once from within the answer. Answers aedes' own, bound to the broker.
 */
export function replaceAedesPublish(
  broker: Aedes,
  publish: (own: AedesPublish) => AedesPublish,
): AedesPublish {
  const own = broker.publish.bind(broker) as unknown as AedesPublish;
  (broker as unknown as { publish: AedesPublish }).publish = publish(own);
  return own;
}

/** aedes' persistence as far as the subscriptions of persistent sessions go (aedes-persistence's API). */
interface SubscriptionStore {
  addSubscriptions(client: Client, subs: unknown[]): Promise<unknown>;
  removeSubscriptions(client: Client, subs: unknown[]): Promise<unknown>;
  cleanSubscriptions(client: Client): Promise<unknown>;
  countOffline(): Promise<{ subsCount: number; clientsCount: number }>;
}

/**
 * Watches the subscriptions aedes keeps for persistent sessions (clean = false; a clean session's are not
 * stored), and answers whether there are none: then aedes' step that queues a QoS 1 or 2 publish for them
 * (enqueueOffline: a persistence query and a topic match a message) has nobody to queue for. A change
 * counts as unknown (not none) until it is stored and counted again, and aedes answers a SUBSCRIBE only
 * after its store, so a subscription acknowledged is counted before any publish that follows it.
 */
export function watchPersistedSubscriptions(broker: Aedes): () => boolean {
  const store = (broker as unknown as { persistence: SubscriptionStore }).persistence;
  let changing = 0;
  let count = Number.POSITIVE_INFINITY;
  const recount = async () => {
    try {
      count = (await store.countOffline()).subsCount;
    } catch {
      count = Number.POSITIVE_INFINITY;
    }
  };
  for (const method of ['addSubscriptions', 'removeSubscriptions', 'cleanSubscriptions'] as const) {
    const original = store[method].bind(store) as (...args: unknown[]) => Promise<unknown>;
    (store as unknown as Record<string, unknown>)[method] = async (...args: unknown[]) => {
      changing++;
      try {
        return await original(...args);
      } finally {
        await recount();
        changing--;
      }
    };
  }
  void recount();
  return () => changing === 0 && count === 0;
}
