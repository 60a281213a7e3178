import type { Kysely, Selectable } from 'kysely';
import type {
  Database,
  OAuth2AuthorizationCodeTable,
  OAuth2GrantTable,
  OAuth2RefreshTokenTable,
} from '../../../storage/tables.js';

export type GrantRow = Selectable<OAuth2GrantTable>;
export type CodeRow = Selectable<OAuth2AuthorizationCodeTable>;
export type RefreshTokenRow = Selectable<OAuth2RefreshTokenTable>;

/** Storage of grants and what hangs off them: authorization codes, refresh tokens, access token records, consents. */
export class GrantsRepository {
  constructor(private readonly db: Kysely<Database>) {}

  async insertGrant(row: GrantRow): Promise<void> {
    await this.db.insertInto('oauth2_grants').values(row).execute();
  }

  findGrant(id: string): Promise<GrantRow | undefined> {
    return this.db.selectFrom('oauth2_grants').selectAll().where('id', '=', id).executeTakeFirst();
  }

  async insertCode(row: CodeRow): Promise<void> {
    await this.db.insertInto('oauth2_authorization_codes').values(row).execute();
  }

  /** The code with its grant and the grant's client_id. */
  findCode(codeHash: string) {
    return this.db
      .selectFrom('oauth2_authorization_codes as c')
      .innerJoin('oauth2_grants as g', 'g.id', 'c.grant_id')
      .innerJoin('oauth2_clients as cl', 'cl.id', 'g.client_pk')
      .select([
        'c.code_hash',
        'c.grant_id',
        'c.redirect_uri',
        'c.redirect_uri_given',
        'c.scopes',
        'c.nonce',
        'c.code_challenge',
        'c.expires_at',
        'c.used_at',
        'g.user_id',
        'g.auth_time',
        'g.revoked_at',
        'cl.client_id',
      ])
      .where('c.code_hash', '=', codeHash)
      .executeTakeFirst();
  }

  /** Marks a code used; false when it was already used (a replay, possibly concurrent). */
  async markCodeUsed(codeHash: string, now: number): Promise<boolean> {
    const result = await this.db
      .updateTable('oauth2_authorization_codes')
      .set({ used_at: now })
      .where('code_hash', '=', codeHash)
      .where('used_at', 'is', null)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  async insertRefreshToken(row: RefreshTokenRow): Promise<void> {
    await this.db.insertInto('oauth2_refresh_tokens').values(row).execute();
  }

  /** The refresh token with its grant and the grant's client_id. */
  findRefreshToken(tokenHash: string) {
    return this.db
      .selectFrom('oauth2_refresh_tokens as r')
      .innerJoin('oauth2_grants as g', 'g.id', 'r.grant_id')
      .innerJoin('oauth2_clients as cl', 'cl.id', 'g.client_pk')
      .select([
        'r.token_hash',
        'r.grant_id',
        'r.scopes',
        'r.created_at',
        'r.expires_at',
        'r.rotated_at',
        'g.user_id',
        'g.auth_time',
        'g.revoked_at',
        'cl.client_id',
      ])
      .where('r.token_hash', '=', tokenHash)
      .executeTakeFirst();
  }

  /** Marks a refresh token exchanged; false when it already was (reuse). */
  async markRefreshTokenRotated(tokenHash: string, now: number): Promise<boolean> {
    const result = await this.db
      .updateTable('oauth2_refresh_tokens')
      .set({ rotated_at: now })
      .where('token_hash', '=', tokenHash)
      .where('rotated_at', 'is', null)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  async recordAccessToken(jti: string, grantId: string, expiresAt: number): Promise<void> {
    await this.db
      .insertInto('oauth2_access_tokens')
      .values({ jti, grant_id: grantId, expires_at: expiresAt })
      .execute();
  }

  /**
   * Revokes a grant: marks it revoked and answers the unexpired access tokens it produced, so the caller
   * can put them on the revocation list. Refresh tokens die with the grant (checked on use).
   */
  async revokeGrant(grantId: string, now: number): Promise<{ jti: string; expiresAt: number }[]> {
    await this.db
      .updateTable('oauth2_grants')
      .set({ revoked_at: now })
      .where('id', '=', grantId)
      .where('revoked_at', 'is', null)
      .execute();
    const rows = await this.db
      .selectFrom('oauth2_access_tokens')
      .select(['jti', 'expires_at'])
      .where('grant_id', '=', grantId)
      .where('expires_at', '>', now)
      .execute();
    return rows.map((r) => ({ jti: r.jti, expiresAt: r.expires_at }));
  }

  async findConsent(clientPk: string, userId: string): Promise<string[] | undefined> {
    const row = await this.db
      .selectFrom('oauth2_consents')
      .select('scopes')
      .where('client_pk', '=', clientPk)
      .where('user_id', '=', userId)
      .executeTakeFirst();
    return row ? row.scopes.split(' ').filter(Boolean) : undefined;
  }

  async saveConsent(clientPk: string, userId: string, scopes: readonly string[], now: number): Promise<void> {
    await this.db
      .insertInto('oauth2_consents')
      .values({ client_pk: clientPk, user_id: userId, scopes: scopes.join(' '), updated_at: now })
      .onConflict((oc) =>
        oc.columns(['client_pk', 'user_id']).doUpdateSet({ scopes: scopes.join(' '), updated_at: now }),
      )
      .execute();
  }

  /** Deletes expired codes, refresh tokens and access token records. */
  async prune(now: number): Promise<void> {
    await this.db
      .deleteFrom('oauth2_authorization_codes')
      .where('expires_at', '<', now - 3_600_000)
      .execute();
    await this.db.deleteFrom('oauth2_refresh_tokens').where('expires_at', '<', now).execute();
    await this.db.deleteFrom('oauth2_access_tokens').where('expires_at', '<', now).execute();
  }
}
