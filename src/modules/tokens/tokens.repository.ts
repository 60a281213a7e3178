import type { Kysely, Selectable } from 'kysely';
import { type ListParams, runListQuery } from '../../platform/list-query.js';
import type { Database, PersonalAccessTokenTable } from '../../storage/tables.js';

export type PatRow = Selectable<PersonalAccessTokenTable>;
export type PatStatusFilter = 'all' | 'active' | 'expired' | 'revoked';

/** Kysely queries over `personal_access_tokens`. */
export class TokensRepository {
  constructor(private readonly db: Kysely<Database>) {}

  async insert(row: PatRow): Promise<void> {
    await this.db.insertInto('personal_access_tokens').values(row).execute();
  }

  findByHash(tokenHash: string): Promise<PatRow | undefined> {
    return this.db
      .selectFrom('personal_access_tokens')
      .selectAll()
      .where('token_hash', '=', tokenHash)
      .executeTakeFirst();
  }

  findOwned(id: string, userId: string): Promise<PatRow | undefined> {
    return this.db
      .selectFrom('personal_access_tokens')
      .selectAll()
      .where('id', '=', id)
      .where('user_id', '=', userId)
      .executeTakeFirst();
  }

  async update(id: string, patch: Partial<PatRow>): Promise<void> {
    await this.db.updateTable('personal_access_tokens').set(patch).where('id', '=', id).execute();
  }

  async countUsable(userId: string, now: number): Promise<number> {
    const row = await this.db
      .selectFrom('personal_access_tokens')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('user_id', '=', userId)
      .where('revoked_at', 'is', null)
      .where('expires_at', '>', now)
      .executeTakeFirst();
    return Number(row?.n ?? 0);
  }

  /** The user's tokens with a status filter, search by name, sort and paging. */
  list(userId: string, status: PatStatusFilter | undefined, now: number, params: ListParams) {
    let query = this.db.selectFrom('personal_access_tokens').selectAll().where('user_id', '=', userId);
    if (status === 'active') query = query.where('revoked_at', 'is', null).where('expires_at', '>', now);
    else if (status === 'expired')
      query = query.where('revoked_at', 'is', null).where('expires_at', '<=', now);
    else if (status === 'revoked') query = query.where('revoked_at', 'is not', null);
    return runListQuery(query, params, {
      searchColumns: ['name'],
      sortColumns: {
        name: 'name',
        createdAt: 'created_at',
        expiresAt: 'expires_at',
        lastUsedAt: 'last_used_at',
      },
      defaultSort: 'createdAt',
      defaultOrder: 'desc',
      tieBreaker: 'id',
    });
  }
}
