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

interface CachedStanding {
  standing: CallerStanding | undefined;
  expiresAt: number;
}

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

  // By user, then by organization id ('' for none): a cached request looks up the principal's user id
  // (hash already computed) and the short organization header, rather than hashing a joined key each time.
  const cache = new Map<string, Map<string, CachedStanding>>();
  let size = 0;
  let generation = 0;
  const forgetUser = (userId: string) => {
    const byOrganization = cache.get(userId);
    if (byOrganization === undefined) return;
    size -= byOrganization.size;
    cache.delete(userId);
  };
  const forget = (userId: string, byOrganization: Map<string, CachedStanding>, organizationId: string) => {
    if (!byOrganization.delete(organizationId)) return;
    size--;
    if (byOrganization.size === 0) cache.delete(userId);
  };
  bus.subscribe((event) => {
    if (event.topic === '*') {
      generation++;
      cache.clear();
      size = 0;
    } else if (event.topic === STANDING_TOPICS.user) {
      generation++;
      if (event.id) forgetUser(event.id);
    } else if (event.topic === STANDING_TOPICS.organization) {
      generation++;
      if (event.id) for (const [userId, byOrganization] of cache) forget(userId, byOrganization, event.id);
    } else if (event.topic === STANDING_TOPICS.membership) {
      generation++;
      const [userId, organizationId] = (event.id ?? '').split('|');
      const byOrganization = userId ? cache.get(userId) : undefined;
      if (byOrganization && organizationId) forget(userId!, byOrganization, organizationId);
    }
  });

  const fresh = (userId: string, organizationId: string | null) => {
    const hit = cache.get(userId)?.get(organizationId ?? '');
    return hit !== undefined && hit.expiresAt > Date.now() ? hit : undefined;
  };
  const remember = (userId: string, organizationId: string | null, entry: CachedStanding) => {
    if (size >= CACHE_MAX_ENTRIES) {
      cache.clear();
      size = 0;
    }
    let byOrganization = cache.get(userId);
    if (byOrganization === undefined) {
      byOrganization = new Map();
      cache.set(userId, byOrganization);
    }
    const key = organizationId ?? '';
    if (!byOrganization.has(key)) size++;
    byOrganization.set(key, entry);
  };

  return {
    async standing(userId, organizationId) {
      const hit = fresh(userId, organizationId);
      if (hit) return hit.standing;
      // An eviction that lands while the query runs must not be undone by caching its (older) answer.
      const before = generation;
      const now = Date.now();
      const standing = await lookUp(userId, organizationId);
      if (before === generation)
        remember(userId, organizationId, { standing, expiresAt: now + CACHE_TTL_MS });
      return standing;
    },
    cachedStanding(userId, organizationId) {
      return fresh(userId, organizationId)?.standing;
    },
  };
}
