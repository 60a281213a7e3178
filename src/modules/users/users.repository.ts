import type { Kysely, Selectable } from 'kysely';
import { type ListParams, runListQuery } from '../../platform/list-query.js';
import type { Database, UserTable } from '../../storage/tables.js';

export type UserRow = Selectable<UserTable>;
export type UserStatusFilter = 'active' | 'deactivated' | 'deleted' | 'all';

/** Kysely queries over `users`; plain rows, no HTTP. */
export class UsersRepository {
  constructor(private readonly db: Kysely<Database>) {}

  findById(id: string): Promise<UserRow | undefined> {
    return this.db.selectFrom('users').selectAll().where('id', '=', id).executeTakeFirst();
  }

  findByEmail(email: string): Promise<UserRow | undefined> {
    return this.db
      .selectFrom('users')
      .selectAll()
      .where('email_normalized', '=', email.trim().toLowerCase())
      .executeTakeFirst();
  }

  async insert(row: UserRow): Promise<void> {
    await this.db.insertInto('users').values(row).execute();
  }

  async update(id: string, patch: Partial<UserRow>): Promise<void> {
    await this.db.updateTable('users').set(patch).where('id', '=', id).execute();
  }

  /** Active, undeleted System Administrators other than `exceptId`. */
  async countOtherActiveSystemAdmins(exceptId: string): Promise<number> {
    const row = await this.db
      .selectFrom('users')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('is_system_admin', '=', 1)
      .where('status', '=', 'active')
      .where('deleted_at', 'is', null)
      .where('id', '!=', exceptId)
      .executeTakeFirst();
    return Number(row?.n ?? 0);
  }

  async hasAnyUser(): Promise<boolean> {
    return (await this.db.selectFrom('users').select('id').limit(1).executeTakeFirst()) !== undefined;
  }

  /** Lists users; without a status filter, every user that is not deleted. */
  list(status: UserStatusFilter | undefined, params: ListParams) {
    let query = this.db.selectFrom('users').selectAll();
    if (status === 'deleted') query = query.where('deleted_at', 'is not', null);
    else if (status === undefined) query = query.where('deleted_at', 'is', null);
    else if (status !== 'all') query = query.where('deleted_at', 'is', null).where('status', '=', status);
    return runListQuery(query, params, {
      searchColumns: ['email', 'display_name'],
      sortColumns: {
        email: 'email_normalized',
        displayName: 'display_name',
        createdAt: 'created_at',
        updatedAt: 'updated_at',
      },
      defaultSort: 'createdAt',
      tieBreaker: 'id',
    });
  }

  async deleteSessions(userId: string): Promise<void> {
    await this.db.deleteFrom('sessions').where('user_id', '=', userId).execute();
  }
}
