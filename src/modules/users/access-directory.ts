import type { Kysely } from 'kysely';
import type { AccessDirectory, CallerStanding } from '../../platform/access-control.js';
import type { InvalidationBus } from '../../platform/invalidation-bus.js';
import type { Database, OrganizationRole } from '../../storage/tables.js';

/** Bus topics that change a caller's standing; their `id` is a user id, an organization id, or both joined by `|`. */
export const STANDING_TOPICS = {
  user: 'user.changed',
  organization: 'organization.changed',
  membership: 'membership.changed',
} as const;

// A backstop only: every change that matters is announced on the bus and evicts at once.
const CACHE_TTL_MS = 5_000;
const CACHE_MAX_ENTRIES = 50_000;

/** One query for the user's state and their membership in one organization. */
function lookUpStanding(db: Kysely<Database>) {
  return async (userId: string, organizationId: string | null): Promise<CallerStanding | undefined> => {
    const row = await db
      .selectFrom('users as u')
      .leftJoin('organizations as o', (join) =>
        join.on('o.id', '=', organizationId ?? '').on('o.status', '=', 'active'),
      )
      .leftJoin('memberships as m', (join) =>
        join.onRef('m.user_id', '=', 'u.id').onRef('m.organization_id', '=', 'o.id'),
      )
      .select(['u.status', 'u.is_system_admin', 'u.deleted_at', 'o.id as organization_id', 'm.role'])
      .where('u.id', '=', userId)
      .executeTakeFirst();
    if (!row) return undefined;
    return {
      userActive: row.status === 'active' && row.deleted_at === null,
      isSystemAdmin: row.is_system_admin === 1,
      organization: row.organization_id
        ? { id: row.organization_id, role: (row.role as OrganizationRole | null) ?? null }
        : null,
    };
  };
}

/**
 * The per-request standing lookup. With a bus it caches by (user, organization) and evicts on every
 * user, organization or membership change announced on it, so a deactivation or a lowered role takes
 * effect on the next request here and within milliseconds on other replicas.
 */
export function createAccessDirectory(db: Kysely<Database>, bus?: InvalidationBus): AccessDirectory {
  const lookUp = lookUpStanding(db);
  if (!bus) return { standing: lookUp };

  const cache = new Map<string, { standing: CallerStanding | undefined; expiresAt: number }>();
  let generation = 0;
  const evict = (matches: (userId: string, organizationId: string) => boolean) => {
    generation++;
    for (const key of cache.keys()) {
      const [userId, organizationId] = key.split('|') as [string, string];
      if (matches(userId, organizationId)) cache.delete(key);
    }
  };
  bus.subscribe((event) => {
    if (event.topic === '*') {
      generation++;
      cache.clear();
    } else if (event.topic === STANDING_TOPICS.user) evict((userId) => userId === event.id);
    else if (event.topic === STANDING_TOPICS.organization)
      evict((_u, organizationId) => organizationId === event.id);
    else if (event.topic === STANDING_TOPICS.membership) {
      const [userId, organizationId] = (event.id ?? '').split('|');
      evict((u, o) => u === userId && o === organizationId);
    }
  });

  return {
    async standing(userId, organizationId) {
      const key = `${userId}|${organizationId ?? ''}`;
      const now = Date.now();
      const hit = cache.get(key);
      if (hit && hit.expiresAt > now) return hit.standing;
      // An eviction that lands while the query runs must not be undone by caching its (older) answer.
      const before = generation;
      const standing = await lookUp(userId, organizationId);
      if (before === generation) {
        if (cache.size >= CACHE_MAX_ENTRIES) cache.clear();
        cache.set(key, { standing, expiresAt: now + CACHE_TTL_MS });
      }
      return standing;
    },
  };
}
