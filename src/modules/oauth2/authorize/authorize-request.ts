import type { PkceChallenge } from '../checks/check-pkce.js';
import { readPkceParameters } from '../checks/check-pkce.js';
import { resolveRedirectUri } from '../checks/check-redirect-uri.js';
import { parseScope, requireScopesWithin } from '../checks/check-scope.js';
import type { ClientLookup } from '../clients/client-lookup.js';
import type { StoredClient } from '../clients/clients.repository.js';
import {
  InvalidRequestError,
  isOAuth2Error,
  type OAuth2Error,
  UnauthorizedClientError,
  UnsupportedResponseTypeError,
} from '../oauth2-errors.js';

/** A validated authorization request (RFC 6749 §4.1.1, OIDC Core §3.1.2.1). */
export interface AuthorizationRequest {
  client: StoredClient;
  redirectUri: string;
  redirectUriGiven: boolean;
  scopes: string[];
  state: string | undefined;
  nonce: string | undefined;
  pkce: PkceChallenge | null;
  /** The `prompt` values (OIDC Core §3.1.2.1): none, login, consent. */
  prompt: ReadonlySet<string>;
  /** `max_age` in seconds: a sign-in older than this must be repeated. */
  maxAgeSeconds: number | undefined;
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
  'max_age',
];

const PROMPT_VALUES = new Set(['none', 'login', 'consent']);
/** At most a year: larger values are almost certainly a unit mistake. */
const MAX_AGE_LIMIT_S = 31_536_000;

/** Validates an authorization request in the order RFC 6749 §4.1.2.1 requires: client and redirect URI first. */
export async function checkAuthorizationRequest(
  params: URLSearchParams,
  clients: ClientLookup,
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
    const prompt = readPrompt(one('prompt'));
    const maxAgeSeconds = readMaxAge(one('max_age'));
    const nonce = one('nonce');
    if (nonce !== undefined && nonce.length > 512) throw new InvalidRequestError('nonce is too long');
    return {
      kind: 'valid',
      request: {
        client,
        redirectUri,
        redirectUriGiven: requested !== undefined && requested !== '',
        scopes: [...(asked.length > 0 ? asked : client.allowedScopes)],
        state,
        nonce,
        pkce,
        prompt,
        maxAgeSeconds,
        params,
      },
    };
  } catch (error) {
    if (isOAuth2Error(error)) return { kind: 'redirect', redirectUri, error, state };
    throw error;
  }
}

function readPrompt(value: string | undefined): ReadonlySet<string> {
  const values = new Set((value ?? '').split(' ').filter((v) => v !== ''));
  for (const v of values) {
    if (!PROMPT_VALUES.has(v)) throw new InvalidRequestError(`prompt value ${v} is not supported`);
  }
  if (values.has('none') && values.size > 1) {
    throw new InvalidRequestError('prompt=none must not be combined with other values');
  }
  return values;
}

function readMaxAge(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  if (!/^\d{1,9}$/.test(value) || Number(value) > MAX_AGE_LIMIT_S) {
    throw new InvalidRequestError(`max_age must be a whole number of seconds from 0 to ${MAX_AGE_LIMIT_S}`);
  }
  return Number(value);
}

/**
 * The parameters to resume with after the user signed in: the demand for a fresh sign-in (prompt=login,
 * max_age) has just been met, so it is dropped, or the sign-in page would come back forever. The ID token's
 * auth_time tells the client when the sign-in happened.
 */
export function afterSignIn(params: URLSearchParams): URLSearchParams {
  const next = new URLSearchParams(params);
  next.delete('max_age');
  const prompt = (next.get('prompt') ?? '').split(' ').filter((v) => v !== '' && v !== 'login');
  if (prompt.length > 0) next.set('prompt', prompt.join(' '));
  else next.delete('prompt');
  return next;
}

/** The redirect URI with the parameters appended to its query. */
export function redirectWith(uri: string, params: Record<string, string | undefined>): string {
  const url = new URL(uri);
  for (const [key, value] of Object.entries(params))
    if (value !== undefined) url.searchParams.append(key, value);
  return url.toString();
}
