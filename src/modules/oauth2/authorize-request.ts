import type { PkceChallenge } from './checks/check-pkce.js';
import { readPkceParameters } from './checks/check-pkce.js';
import { resolveRedirectUri } from './checks/check-redirect-uri.js';
import { parseScope, requireScopesWithin } from './checks/check-scope.js';
import type { ClientsRepository, StoredClient } from './clients.repository.js';
import {
  InvalidRequestError,
  isOAuth2Error,
  type OAuth2Error,
  UnauthorizedClientError,
  UnsupportedResponseTypeError,
} from './oauth2-errors.js';

/** A validated authorization request (RFC 6749 §4.1.1, OIDC Core §3.1.2.1). */
export interface AuthorizationRequest {
  client: StoredClient;
  redirectUri: string;
  redirectUriGiven: boolean;
  scopes: string[];
  state: string | undefined;
  nonce: string | undefined;
  pkce: PkceChallenge | null;
  prompt: string | undefined;
  /** The original parameters, carried through the login and consent forms. */
  params: URLSearchParams;
}

export type AuthorizationCheck =
  | { kind: 'valid'; request: AuthorizationRequest }
  /** Before the redirect URI is trusted: show the error to the user, never redirect (RFC 6749 §4.1.2.1). */
  | { kind: 'page'; error: string }
  | { kind: 'redirect'; redirectUri: string; error: OAuth2Error; state: string | undefined };

const SINGLE = [
  'client_id',
  'redirect_uri',
  'response_type',
  'scope',
  'state',
  'nonce',
  'code_challenge',
  'code_challenge_method',
  'prompt',
];

/** Validates an authorization request in the order RFC 6749 §4.1.2.1 requires: client and redirect URI first. */
export async function checkAuthorizationRequest(
  params: URLSearchParams,
  clients: ClientsRepository,
): Promise<AuthorizationCheck> {
  const one = (name: string) => params.get(name) ?? undefined;
  const clientId = one('client_id');
  if (!clientId || params.getAll('client_id').length > 1)
    return { kind: 'page', error: 'The request names no client (client_id).' };
  const client = await clients.findByClientId(clientId);
  if (!client) return { kind: 'page', error: 'The application that sent you here is not registered.' };
  const requested = one('redirect_uri');
  const redirectUri =
    params.getAll('redirect_uri').length > 1 ? null : resolveRedirectUri(requested, client.redirectUris);
  if (!redirectUri) {
    return { kind: 'page', error: 'The redirect URI of this request is not registered for the application.' };
  }
  const state = one('state');
  try {
    for (const name of SINGLE) {
      if (params.getAll(name).length > 1) throw new InvalidRequestError(`${name} must not be repeated`);
    }
    if (one('response_type') !== 'code') {
      throw new UnsupportedResponseTypeError('response_type must be code');
    }
    if (client.status === 'disabled') throw new UnauthorizedClientError('client is disabled');
    if (!client.grantTypes.includes('authorization_code')) {
      throw new UnauthorizedClientError('the client is not allowed the authorization_code grant');
    }
    const asked = parseScope(one('scope'));
    requireScopesWithin(asked, client.allowedScopes);
    const pkce = readPkceParameters(
      { codeChallenge: one('code_challenge'), codeChallengeMethod: one('code_challenge_method') },
      client.clientType,
    );
    const nonce = one('nonce');
    if (nonce !== undefined && nonce.length > 512) throw new InvalidRequestError('nonce is too long');
    return {
      kind: 'valid',
      request: {
        client,
        redirectUri,
        redirectUriGiven: requested !== undefined && requested !== '',
        scopes: asked.length > 0 ? asked : [...client.allowedScopes],
        state,
        nonce,
        pkce,
        prompt: one('prompt'),
        params,
      },
    };
  } catch (error) {
    if (isOAuth2Error(error)) return { kind: 'redirect', redirectUri, error, state };
    throw error;
  }
}

/** The redirect URI with the parameters appended to its query. */
export function redirectWith(uri: string, params: Record<string, string | undefined>): string {
  const url = new URL(uri);
  for (const [key, value] of Object.entries(params))
    if (value !== undefined) url.searchParams.append(key, value);
  return url.toString();
}
