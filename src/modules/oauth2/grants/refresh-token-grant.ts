import { hashOpaqueToken, isWellFormedOpaqueToken, TOKEN_PREFIX } from '../../../platform/opaque-token.js';
import { parseScope } from '../checks/check-scope.js';
import {
  InvalidGrantError,
  InvalidRequestError,
  InvalidScopeError,
  UnauthorizedClientError,
} from '../oauth2-errors.js';
import type { TokenResponse } from '../token/token-issuer.js';
import { type GrantContext, isUserActive, revokeGrant, scopesToIssue } from './grant-context.js';

/**
 * RFC 6749 §6 with rotation (RFC 9700 §4.14.2): every use returns a new refresh token; presenting a
 * rotated one again revokes the whole grant. The scope may only narrow, and only for the access token.
 */
export async function refreshTokenGrant({
  client,
  body,
  requestId,
  deps,
}: GrantContext): Promise<TokenResponse> {
  if (!client.grantTypes.includes('refresh_token')) {
    throw new UnauthorizedClientError('the client is not allowed the refresh_token grant');
  }
  const token = body.refresh_token;
  if (!token) throw new InvalidRequestError('refresh_token is required');
  const invalid = new InvalidGrantError('the refresh token is invalid, expired or revoked');
  if (!isWellFormedOpaqueToken(token, TOKEN_PREFIX.refreshToken)) throw invalid;
  const tokenHash = hashOpaqueToken(token);
  const row = await deps.grants.findRefreshToken(tokenHash);
  if (!row || row.client_id !== client.clientId) throw invalid;
  const now = deps.clock.now();
  if (row.revoked_at !== null || row.expires_at <= now) throw invalid;
  const granted = row.scopes.split(' ').filter(Boolean);
  const requested = parseScope(body.scope);
  const beyond = requested.filter((s) => !granted.includes(s));
  if (beyond.length > 0) {
    throw new InvalidScopeError(`a refresh may only narrow the scope; not granted: ${beyond.join(' ')}`);
  }
  if (row.rotated_at !== null || !(await deps.grants.markRefreshTokenRotated(tokenHash, now))) {
    await revokeGrant(deps, row.grant_id);
    throw invalid;
  }
  if (!(await isUserActive(deps.directory, row.user_id)))
    throw new InvalidGrantError('the user is not active');
  // Scopes the client is no longer allowed are dropped from the new access token.
  const scopes = (requested.length > 0 ? requested : granted).filter((s) => client.allowedScopes.includes(s));
  return deps.issuer.issue({
    clientId: client.clientId,
    userId: row.user_id,
    scopes: await scopesToIssue(deps, client, row.user_id, scopes),
    grantType: 'refresh_token',
    requestId,
    grant: { id: row.grant_id, authTime: row.auth_time, withRefreshToken: true, refreshScopes: granted },
  });
}
