import { parseScope, requireScopesWithin } from '../checks/check-scope.js';
import { InvalidGrantError, UnauthorizedClientError } from '../oauth2-errors.js';
import type { TokenResponse } from '../token/token-issuer.js';
import { type GrantContext, isUserActive, scopesToIssue } from './grant-context.js';

/**
 * RFC 6749 §4.4. Confidential clients with the grant only. Without a scope parameter the token carries
 * every scope the client is allowed. The token's subject is the acting user, or the client's creator; its
 * scopes are cut to what that user's roles allow in the organizations the client is bound to.
 */
export async function clientCredentialsGrant({
  client,
  body,
  requestId,
  deps,
}: GrantContext): Promise<TokenResponse> {
  if (client.clientType !== 'confidential' || !client.grantTypes.includes('client_credentials')) {
    throw new UnauthorizedClientError('the client is not allowed the client_credentials grant');
  }
  const requested = parseScope(body.scope);
  requireScopesWithin(requested, client.allowedScopes);
  const scopes = requested.length > 0 ? requested : client.allowedScopes;
  const userId = client.actingUserId ?? client.createdBy;
  if (!userId || !(await isUserActive(deps.directory, userId))) {
    throw new InvalidGrantError('the user this client acts as is not active');
  }
  return deps.issuer.issue({
    clientId: client.clientId,
    userId,
    scopes: await scopesToIssue(deps, client, userId, scopes),
    grantType: 'client_credentials',
    requestId,
  });
}
