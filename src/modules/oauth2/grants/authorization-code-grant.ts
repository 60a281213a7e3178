import { hashOpaqueToken, isWellFormedOpaqueToken, TOKEN_PREFIX } from '../../../platform/opaque-token.js';
import { checkCodeVerifier } from '../checks/check-pkce.js';
import { InvalidGrantError, InvalidRequestError, UnauthorizedClientError } from '../oauth2-errors.js';
import type { TokenResponse } from '../token/token-issuer.js';
import { type GrantContext, isUserActive, revokeGrant, scopesToIssue } from './grant-context.js';

/** RFC 6749 §4.1.3 with PKCE (RFC 7636 §4.6) and code replay detection (RFC 6749 §4.1.2, RFC 9700 §4.5). */
export async function authorizationCodeGrant({
  client,
  body,
  requestId,
  deps,
}: GrantContext): Promise<TokenResponse> {
  if (!client.grantTypes.includes('authorization_code')) {
    throw new UnauthorizedClientError('the client is not allowed the authorization_code grant');
  }
  const code = body.code;
  if (!code) throw new InvalidRequestError('code is required');
  const invalid = new InvalidGrantError('the authorization code is invalid, expired or already used');
  if (!isWellFormedOpaqueToken(code, TOKEN_PREFIX.authorizationCode)) throw invalid;
  const codeHash = hashOpaqueToken(code);
  const row = await deps.grants.findCode(codeHash);
  if (!row) throw invalid;
  // A code used by another client tells nothing of its owner's grant; refuse without side effects.
  if (row.client_id !== client.clientId) throw invalid;
  const now = deps.clock.now();
  if (row.used_at !== null || !(await deps.grants.markCodeUsed(codeHash, now))) {
    // RFC 6749 §4.1.2: a code used twice revokes every token issued from it.
    await revokeGrant(deps, row.grant_id);
    throw invalid;
  }
  if (row.expires_at <= now || row.revoked_at !== null) throw invalid;
  if (row.redirect_uri_given === 1 || body.redirect_uri !== undefined) {
    if (body.redirect_uri !== row.redirect_uri) {
      throw new InvalidGrantError('redirect_uri does not match the authorization request');
    }
  }
  checkCodeVerifier(row.code_challenge, body.code_verifier);
  if (!(await isUserActive(deps.directory, row.user_id)))
    throw new InvalidGrantError('the user is not active');
  const scopes = await scopesToIssue(deps, client, row.user_id, row.scopes.split(' ').filter(Boolean));
  return deps.issuer.issue({
    clientId: client.clientId,
    userId: row.user_id,
    scopes,
    grantType: 'authorization_code',
    requestId,
    grant: {
      id: row.grant_id,
      authTime: row.auth_time,
      nonce: row.nonce,
      withRefreshToken: client.grantTypes.includes('refresh_token'),
    },
  });
}
