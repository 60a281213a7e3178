import type { FastifyRequest } from 'fastify';
import { hashOpaqueToken, timingSafeEqualString } from '../../../platform/opaque-token.js';
import { InvalidClientError, InvalidRequestError } from '../oauth2-errors.js';
import type { ClientLookup } from './client-lookup.js';
import type { StoredClient } from './clients.repository.js';

export type ClientAuthMethod = 'client_secret_basic' | 'client_secret_post' | 'none';

/** The form parameters of a protocol request (token, introspect, revoke). */
export type FormParams = Record<string, string | undefined>;

/** The client credentials a request presents (RFC 6749 §2.3.1), read before the client is looked up. */
export interface PresentedCredentials {
  clientId: string;
  secret: string | undefined;
  usedBasicAuth: boolean;
}

/**
 * Authenticates the client of a token, introspection or revocation request (RFC 6749 §2.3):
 * client_secret_basic, client_secret_post, or `none` for public clients. A disabled client is refused
 * with invalid_client "client is disabled" once its credentials are checked.
 */
export async function authenticateClient(
  request: FastifyRequest,
  body: FormParams,
  clients: ClientLookup,
): Promise<{ client: StoredClient; method: ClientAuthMethod }> {
  const credentials = readClientCredentials(request, body);
  // Cached, and evicted through the bus: a client disabled through any replica is refused at once.
  return verifyClient(credentials, await clients.findByClientId(credentials.clientId));
}

/** The credentials of a request, with the RFC 6749 §2.3 rules on how they may be sent; throws otherwise. */
export function readClientCredentials(request: FastifyRequest, body: FormParams): PresentedCredentials {
  const query = request.query as Record<string, unknown> | undefined;
  // RFC 6749 §2.3.1: the secret MUST NOT be included in the request URI.
  if (query && 'client_secret' in query)
    throw new InvalidRequestError('client_secret must not be sent in the query string');
  const basic = parseBasic(request.headers.authorization);
  const usedBasicAuth = basic !== undefined;
  if (basic && body.client_secret !== undefined) {
    throw new InvalidRequestError('use one client authentication method, not both Basic and client_secret');
  }
  if (basic && body.client_id !== undefined && body.client_id !== basic.clientId) {
    throw new InvalidRequestError('client_id in the body does not match the Authorization header');
  }
  const clientId = basic?.clientId ?? body.client_id;
  if (!clientId) throw new InvalidClientError('client authentication is required', { usedBasicAuth });
  return { clientId, secret: basic?.secret ?? body.client_secret, usedBasicAuth };
}

/**
 * Checks presented credentials against the client they name (undefined: no such client), without a
 * promise: the token endpoint calls it with a cached client. The secret is hashed even for an unknown
 * client, so the answer takes as long either way, and compared in constant time.
 */
export function verifyClient(
  credentials: PresentedCredentials,
  client: StoredClient | undefined,
): { client: StoredClient; method: ClientAuthMethod } {
  const { secret, usedBasicAuth } = credentials;
  let method: ClientAuthMethod;
  if (client?.clientType === 'public') {
    if (secret !== undefined && secret !== '') {
      throw new InvalidClientError('a public client has no secret', { usedBasicAuth });
    }
    method = 'none';
  } else {
    const presented = hashOpaqueToken(secret ?? '');
    if (!client || !secret || !timingSafeEqualString(presented, client.secretHash ?? '')) {
      throw new InvalidClientError('client authentication failed', { usedBasicAuth });
    }
    method = usedBasicAuth ? 'client_secret_basic' : 'client_secret_post';
  }
  if (!client) throw new InvalidClientError('client authentication failed', { usedBasicAuth });
  if (client.status === 'disabled') throw new InvalidClientError('client is disabled', { usedBasicAuth });
  return { client, method };
}

function parseBasic(header: string | undefined): { clientId: string; secret: string } | undefined {
  if (!header || !/^basic /i.test(header)) return undefined;
  const decoded = Buffer.from(header.slice(6).trim(), 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) throw new InvalidClientError('the Basic credentials are malformed', { usedBasicAuth: true });
  try {
    // RFC 6749 §2.3.1: client_id and secret are form-urlencoded before Basic encoding.
    const decode = (text: string) => decodeURIComponent(text.replace(/\+/g, ' '));
    return { clientId: decode(decoded.slice(0, colon)), secret: decode(decoded.slice(colon + 1)) };
  } catch {
    throw new InvalidClientError('the Basic credentials are malformed', { usedBasicAuth: true });
  }
}
