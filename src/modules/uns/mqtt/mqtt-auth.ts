import type { FastifyBaseLogger, FastifyRequest } from 'fastify';
import type { AccessDirectory, BearerVerifier } from '../../../platform/access-control.js';
import { isScopePermitted, scopesAllowedFor } from '../../../platform/permissions.js';

/** Who an MQTT client is: established once at CONNECT with exactly the HTTP rules. */
export interface MqttIdentity {
  userId: string;
  organizationId: string;
  /** Scopes the client may use: the token's scopes within what the user's role allows. */
  scopes: ReadonlySet<string>;
  /** When the credential expires (epoch ms), where it does. */
  expiresAt?: number | undefined;
}

/** Authenticates a bearer token for an organization; answers the identity or the reason for refusal. */
export type TokenAuthenticator = (
  token: string,
  organizationId: string,
  remoteAddress: string,
) => Promise<MqttIdentity | string>;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * MQTT authentication with the rules of the HTTP request contract: the token goes through the same
 * BearerVerifiers (access tokens, PATs), the account must be active, the organization active and the
 * user a member (or a System Administrator), and the granted scopes are the token's within the role's.
 * `verifiers` is the live array the access control uses, so verifiers added later count here too.
 */
export function createTokenAuthenticator(
  verifiers: readonly BearerVerifier[],
  directory: AccessDirectory,
  log: FastifyBaseLogger,
  now: () => number = Date.now,
): TokenAuthenticator {
  return async (token, organizationId, remoteAddress) => {
    if (!UUID.test(organizationId)) return 'the username must be the organization id';
    const verifier = verifiers.find((v) => v.accepts(token));
    if (!verifier) return 'the password is not a recognised access token or personal access token';
    // Verifiers read only a few request fields (address, headers, logger); MQTT has no HTTP request.
    const pseudoRequest = { ip: remoteAddress, headers: {}, id: 'mqtt', log } as unknown as FastifyRequest;
    const principal = await verifier.verify(token, pseudoRequest);
    if (typeof principal === 'string') return principal;
    if (principal.expiresAt !== undefined && principal.expiresAt <= now())
      return 'the credential has expired';
    const standing = await directory.standing(principal.userId, organizationId.toLowerCase());
    if (!standing?.userActive) return 'the account behind this credential is not active';
    const org = standing.organization;
    if (!org || (!org.role && !standing.isSystemAdmin)) {
      return 'the organization is unknown, suspended, or you are not a member';
    }
    const allowed = scopesAllowedFor(org.role ?? 'Owner', standing.isSystemAdmin);
    const candidates = principal.tokenScopes ?? allowed;
    const scopes = new Set(
      [...candidates].filter((scope) => isScopePermitted(scope, principal.tokenScopes, allowed)),
    );
    return { userId: principal.userId, organizationId: org.id, scopes, expiresAt: principal.expiresAt };
  };
}
