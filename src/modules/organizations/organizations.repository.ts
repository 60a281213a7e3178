import type { Kysely, Selectable } from 'kysely';
import { type ListParams, runListQuery } from '../../platform/list-query.js';
import type { Database, MembershipTable, OrganizationRole, OrganizationTable } from '../../storage/tables.js';

export type OrganizationRow = Selectable<OrganizationTable>;
export type MembershipRow = Selectable<MembershipTable>;

/** Kysely queries over organizations and memberships. */
export class OrganizationsRepository {
  constructor(private readonly db: Kysely<Database>) {}

  findById(id: string): Promise<OrganizationRow | undefined> {
    return this.db.selectFrom('organizations').selectAll().where('id', '=', id).executeTakeFirst();
  }

  async insert(row: OrganizationRow): Promise<void> {
    await this.db.insertInto('organizations').values(row).execute();
  }

  async update(id: string, patch: Partial<OrganizationRow>): Promise<void> {
    await this.db.updateTable('organizations').set(patch).where('id', '=', id).execute();
  }

  /** Deletes the organization row; memberships, topics, schemas and bindings go by ON DELETE CASCADE. */
  async delete(id: string): Promise<boolean> {
    const result = await this.db.deleteFrom('organizations').where('id', '=', id).executeTakeFirst();
    return Number(result.numDeletedRows) > 0;
  }

  /** Organizations visible to a caller with their role in each; `memberOnly` restricts to their memberships. */
  list(
    userId: string,
    memberOnly: boolean,
    status: 'active' | 'suspended' | 'all' | undefined,
    params: ListParams,
  ) {
    let query = this.db
      .selectFrom('organizations as o')
      .leftJoin('memberships as m', (join) =>
        join.onRef('m.organization_id', '=', 'o.id').on('m.user_id', '=', userId),
      )
      .selectAll('o')
      .select('m.role');
    if (memberOnly) query = query.where('m.user_id', 'is not', null);
    if (status && status !== 'all') query = query.where('o.status', '=', status);
    return runListQuery(query, params, {
      searchColumns: ['o.name'],
      sortColumns: { name: 'o.name', createdAt: 'o.created_at', updatedAt: 'o.updated_at' },
      defaultSort: 'name',
      tieBreaker: 'o.id',
    });
  }

  findMembership(organizationId: string, userId: string): Promise<MembershipRow | undefined> {
    return this.db
      .selectFrom('memberships')
      .selectAll()
      .where('organization_id', '=', organizationId)
      .where('user_id', '=', userId)
      .executeTakeFirst();
  }

  /** Whether two users are members of at least one common organization. */
  async shareAnOrganization(userId: string, otherUserId: string): Promise<boolean> {
    const row = await this.db
      .selectFrom('memberships as a')
      .innerJoin('memberships as b', 'b.organization_id', 'a.organization_id')
      .select('a.organization_id')
      .where('a.user_id', '=', userId)
      .where('b.user_id', '=', otherUserId)
      .executeTakeFirst();
    return row !== undefined;
  }

  async upsertMembership(row: MembershipRow): Promise<void> {
    await this.db
      .insertInto('memberships')
      .values(row)
      .onConflict((oc) =>
        oc
          .columns(['user_id', 'organization_id'])
          .doUpdateSet({ role: row.role, updated_at: row.updated_at }),
      )
      .execute();
  }

  async deleteMembership(organizationId: string, userId: string): Promise<void> {
    await this.db
      .deleteFrom('memberships')
      .where('organization_id', '=', organizationId)
      .where('user_id', '=', userId)
      .execute();
  }

  async countRole(organizationId: string, role: OrganizationRole): Promise<number> {
    const row = await this.db
      .selectFrom('memberships')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('organization_id', '=', organizationId)
      .where('role', '=', role)
      .executeTakeFirst();
    return Number(row?.n ?? 0);
  }

  listMembers(organizationId: string, params: ListParams) {
    const query = this.db
      .selectFrom('memberships as m')
      .innerJoin('users as u', 'u.id', 'm.user_id')
      .select([
        'm.user_id',
        'm.role',
        'm.created_at',
        'm.updated_at',
        'u.email',
        'u.display_name',
        'u.status',
      ])
      .where('m.organization_id', '=', organizationId)
      .where('u.deleted_at', 'is', null);
    return runListQuery(query, params, {
      searchColumns: ['u.email', 'u.display_name'],
      sortColumns: {
        email: 'u.email_normalized',
        displayName: 'u.display_name',
        role: 'm.role',
        createdAt: 'm.created_at',
      },
      defaultSort: 'email',
      tieBreaker: 'm.user_id',
    });
  }
}
