import type { Kysely } from 'kysely';
import type { AccessDirectory, CallerStanding } from '../../platform/access-control.js';
import type { Database, OrganizationRole } from '../../storage/tables.js';

/** The per-request standing lookup: one query for the user's state and their membership in one organization. */
export function createAccessDirectory(db: Kysely<Database>): AccessDirectory {
  return {
    async standing(userId, organizationId): Promise<CallerStanding | undefined> {
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
    },
  };
}
