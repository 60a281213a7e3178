import type { Kysely } from 'kysely';
import type { InvalidationBus } from '../../../platform/invalidation-bus.js';
import type { Database } from '../../../storage/tables.js';
import { STANDING_TOPICS } from '../../users/access-directory.js';
import { type HoldableScopes, holdableScopes } from '../checks/check-user-scopes.js';

/** What a user can hold through a credential (check-user-scopes.ts), looked up for every grant. */
export interface HoldableScopesLookup {
  holdable(userId: string, boundOrganizations: readonly string[] | null): Promise<HoldableScopes>;
}

// A backstop only: every change that matters is announced on the bus and evicts at once.
const CACHE_TTL_MS = 5_000;
const CACHE_MAX_ENTRIES = 10_000;

interface CachedHoldable {
  holdable: HoldableScopes;
  expiresAt: number;
}

/**
 * The holdable scopes of the token endpoint, cached by user and by the client's organization binding, and
 * evicted by what changes them on the bus: `user.changed` (status, System Administrator, deletion) and
 * `membership.changed` forget that user, `organization.changed` (suspended, activated, deleted) and `*`
 * forget everything. A role lowered or a membership removed through any replica applies to the next token
 * issued here (this replica) or within milliseconds (others, over LISTEN/NOTIFY), as the access directory's
 * standings do. Before it, two queries a token were a sixth of the client credentials grant's event loop.
 */
export function createHoldableScopesCache(db: Kysely<Database>, bus: InvalidationBus): HoldableScopesLookup {
  // By user, then by binding (the bound organization ids joined, or '*' for a client bound to none).
  const cache = new Map<string, Map<string, CachedHoldable>>();
  let size = 0;
  let generation = 0;
  const forgetAll = () => {
    generation++;
    cache.clear();
    size = 0;
  };
  const forgetUser = (userId: string) => {
    generation++;
    const byBinding = cache.get(userId);
    if (byBinding === undefined) return;
    size -= byBinding.size;
    cache.delete(userId);
  };
  bus.subscribe((event) => {
    if (event.topic === '*' || event.topic === STANDING_TOPICS.organization) forgetAll();
    else if (event.topic === STANDING_TOPICS.user) forgetUser(event.id ?? '');
    else if (event.topic === STANDING_TOPICS.membership) forgetUser((event.id ?? '').split('|')[0]!);
  });

  return {
    async holdable(userId, boundOrganizations) {
      const binding = boundOrganizations === null ? '*' : boundOrganizations.join(',');
      const now = Date.now();
      const hit = cache.get(userId)?.get(binding);
      if (hit !== undefined && hit.expiresAt > now) return hit.holdable;
      // An eviction that lands while the query runs must not be undone by caching its (older) answer.
      const before = generation;
      const holdable = await holdableScopes(db, userId, boundOrganizations);
      if (before !== generation) return holdable;
      if (size >= CACHE_MAX_ENTRIES) {
        cache.clear();
        size = 0;
      }
      let byBinding = cache.get(userId);
      if (byBinding === undefined) {
        byBinding = new Map();
        cache.set(userId, byBinding);
      }
      if (!byBinding.has(binding)) size++;
      byBinding.set(binding, { holdable, expiresAt: now + CACHE_TTL_MS });
      return holdable;
    },
  };
}
