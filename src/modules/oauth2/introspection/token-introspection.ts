import type { Kysely } from 'kysely';
import type { Clock } from '../../../platform/clock.js';
import { hashOpaqueToken, isWellFormedOpaqueToken, TOKEN_PREFIX } from '../../../platform/opaque-token.js';
import type { Database } from '../../../storage/tables.js';
import type { TokensService } from '../../tokens/tokens.service.js';
import type { StoredClient } from '../clients/clients.repository.js';
import { type GrantDeps, isUserActive, revokeGrant } from '../grants/grant-context.js';
import type { GrantsRepository } from '../grants/grants.repository.js';
import { UnauthorizedClientError } from '../oauth2-errors.js';
import type { AccessTokenVerifier } from './access-token-verifier.js';

/** The RFC 7662 §2.2 answer. */
export type IntrospectionResponse = { active: false } | ({ active: true } & Record<string, unknown>);

const INACTIVE: IntrospectionResponse = { active: false };

export interface IntrospectionDeps {
  db: Kysely<Database>;
  clock: Clock;
  issuer: string;
  accessTokens: AccessTokenVerifier;
  grants: GrantsRepository;
  pats: TokensService;
  grantDeps: GrantDeps;
}

/**
 * Introspection (RFC 7662) of access tokens, refresh tokens and PATs, and revocation (RFC 7009) of
 * access and refresh tokens. A public client sees only its own tokens; PATs are shown to confidential clients.
 */
export class TokenIntrospection {
  constructor(private readonly deps: IntrospectionDeps) {}

  async introspect(token: string, caller: StoredClient): Promise<IntrospectionResponse> {
    const own = (clientId: string) => caller.clientType === 'confidential' || clientId === caller.clientId;
    if (token.startsWith(TOKEN_PREFIX.personalAccessToken)) {
      if (caller.clientType !== 'confidential') return INACTIVE;
      const row = await this.deps.pats.find(token);
      if (typeof row === 'string' || !(await isUserActive(this.deps.grantDeps.directory, row.user_id)))
        return INACTIVE;
      return {
        active: true,
        token_type: 'personal_access_token',
        scope: row.scopes,
        sub: row.user_id,
        iat: Math.floor(row.created_at / 1000),
        exp: Math.floor(row.expires_at / 1000),
        iss: this.deps.issuer,
      };
    }
    if (token.startsWith(TOKEN_PREFIX.refreshToken)) {
      const row = await this.findRefresh(token);
      if (!row || !own(row.client_id) || !(await isUserActive(this.deps.grantDeps.directory, row.user_id)))
        return INACTIVE;
      return {
        active: true,
        token_type: 'refresh_token',
        scope: row.scopes,
        client_id: row.client_id,
        sub: row.user_id,
        iat: Math.floor(row.created_at / 1000),
        exp: Math.floor(row.expires_at / 1000),
        iss: this.deps.issuer,
      };
    }
    const claims = await this.verifyAccessToken(token);
    if (!claims || !own(claims.client_id) || !(await this.clientExists(claims.client_id))) return INACTIVE;
    if (!(await isUserActive(this.deps.grantDeps.directory, claims.sub))) return INACTIVE;
    return { active: true, token_type: 'Bearer', ...claims };
  }

  /** RFC 7009 §2.1: unknown or invalid tokens are not an error; another client's token is refused. */
  async revoke(token: string, caller: StoredClient): Promise<void> {
    if (token.startsWith(TOKEN_PREFIX.refreshToken)) {
      const row = await this.findRefresh(token, true);
      if (!row) return;
      if (row.client_id !== caller.clientId)
        throw new UnauthorizedClientError('the token was issued to another client');
      // Revoking a refresh token revokes its grant and the access tokens it produced (RFC 7009 §2.1).
      await revokeGrant(this.deps.grantDeps, row.grant_id);
      return;
    }
    const claims = await this.verifyAccessToken(token);
    if (!claims) return;
    if (claims.client_id !== caller.clientId)
      throw new UnauthorizedClientError('the token was issued to another client');
    await this.deps.grantDeps.revocations.revokeTokens([{ jti: claims.jti, expiresAt: claims.exp * 1000 }]);
  }

  private async verifyAccessToken(token: string) {
    if (!this.deps.accessTokens.accepts(token)) return undefined;
    try {
      return (await this.deps.accessTokens.check(token)).claims;
    } catch {
      return undefined;
    }
  }

  private async findRefresh(token: string, includeRotated = false) {
    if (!isWellFormedOpaqueToken(token, TOKEN_PREFIX.refreshToken)) return undefined;
    const row = await this.deps.grants.findRefreshToken(hashOpaqueToken(token));
    if (!row || row.revoked_at !== null || row.expires_at <= this.deps.clock.now()) return undefined;
    if (row.rotated_at !== null && !includeRotated) return undefined;
    return row;
  }

  private async clientExists(clientId: string): Promise<boolean> {
    const row = await this.deps.db
      .selectFrom('oauth2_clients')
      .select('id')
      .where('client_id', '=', clientId)
      .executeTakeFirst();
    return row !== undefined;
  }
}
