import type { InvalidationBus } from '../../../platform/invalidation-bus.js';
import type { ClientsRepository, StoredClient } from './clients.repository.js';

/** Bus topic announcing that a client was edited, enabled, disabled or deleted; `id` is its client ID. */
export const CLIENT_CHANGED_TOPIC = 'client.changed';

// A backstop only: every change is announced on the bus and evicts at once, here and on every replica.
const CACHE_TTL_MS = 5_000;
const CACHE_MAX_ENTRIES = 10_000;

/** Finds a client by its client ID, as the protocol endpoints (token, introspect, revoke, authorize) do. */
export interface ClientLookup {
  findByClientId(clientId: string): Promise<StoredClient | undefined>;
  /** The client when a fresh copy is cached, without a promise; undefined when `findByClientId` must read it. */
  cachedClient?(clientId: string): StoredClient | undefined;
}

/**
 * The client lookup of the protocol endpoints, cached by client ID and evicted by `client.changed` on the
 * bus: a client disabled or deleted through any replica is refused on the next request here (this
 * replica) or within milliseconds (others, over LISTEN/NOTIFY). Unknown client IDs are never cached, so
 * made-up IDs cannot fill the cache.
 */
export function createClientLookup(clients: ClientsRepository, bus: InvalidationBus): ClientLookup {
  const cache = new Map<string, { client: StoredClient; expiresAt: number }>();
  let generation = 0;
  bus.subscribe((event) => {
    if (event.topic === '*') {
      generation++;
      cache.clear();
    } else if (event.topic === CLIENT_CHANGED_TOPIC && event.id !== undefined) {
      generation++;
      cache.delete(event.id);
    }
  });
  const fresh = (clientId: string, now: number) => {
    const hit = cache.get(clientId);
    return hit !== undefined && hit.expiresAt > now ? hit.client : undefined;
  };
  return {
    async findByClientId(clientId) {
      const now = Date.now();
      const hit = fresh(clientId, now);
      if (hit) return hit;
      // An eviction that lands while the query runs must not be undone by caching its (older) answer.
      const before = generation;
      const client = await clients.findByClientId(clientId);
      if (client && before === generation) {
        if (cache.size >= CACHE_MAX_ENTRIES) cache.clear();
        cache.set(clientId, { client, expiresAt: now + CACHE_TTL_MS });
      }
      return client;
    },
    cachedClient: (clientId) => fresh(clientId, Date.now()),
  };
}
