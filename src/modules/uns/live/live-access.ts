import type { FastifyRequest } from 'fastify';
import {
  type AccessDirectory,
  type BearerVerifier,
  mayActIn,
  type Principal,
  type SessionVerifier,
} from '../../../platform/access-control.js';
import type { Clock } from '../../../platform/clock.js';
import type { InvalidationBus } from '../../../platform/invalidation-bus.js';
import { isScopePermitted, scopesAllowedFor } from '../../../platform/permissions.js';
import { watchStanding } from '../../users/standing-watch.js';

export interface AccessWatchDeps {
  bearerVerifiers: readonly BearerVerifier[];
  sessionVerifier: SessionVerifier;
  directory: AccessDirectory;
  bus: InvalidationBus;
  clock: Clock;
  /** How often the credential is checked again (MERIDIAN_UNS_STREAM_RECHECK). */
  intervalMs: number;
  onError: (error: unknown) => void;
}

const BEARER = /^Bearer ([A-Za-z0-9\-._~+/]+=*)$/i;

/**
 * Keeps checking that the credential which opened a long-lived response (a live value stream) still
 * grants `scope` in the request's organization, with the rules of the request contract: the credential
 * verifies (not expired, revoked, or signed out), the account is active, the organization active and
 * the caller a member (or a System Administrator), and the scope is within the token's and the role's.
 * Checks every `intervalMs`, at the credential's expiry, and at once when the bus announces a change of
 * the user, the organization or the membership (from any replica). Calls `onLost` once, with the reason,
 * when access is gone. A check that fails for another reason (storage down) is retried at the next tick.
 * Returns the function that stops watching.
 */
export function watchAccess(
  deps: AccessWatchDeps,
  request: FastifyRequest,
  scope: string,
  onLost: (reason: string) => void,
): () => void {
  const opened = request.principal!;
  const organizationId = request.organization!.id;
  const credential = readCredential(request, deps.sessionVerifier);
  const verify = async (): Promise<Principal | string> => {
    if (credential.kind === 'session') return deps.sessionVerifier.verify(credential.value, request);
    const verifier = deps.bearerVerifiers.find((v) => v.accepts(credential.value));
    if (!verifier) return 'the bearer token is not recognised';
    return verifier.verify(credential.value, request);
  };

  const reasonToClose = async (): Promise<string | null> => {
    const principal = await verify();
    if (typeof principal === 'string') return principal;
    const standing = await deps.directory.standing(principal.userId, organizationId);
    if (!standing?.userActive) return 'the account behind this credential is not active';
    const org = standing.organization;
    if (!org || (!org.role && !standing.isSystemAdmin)) {
      return 'the organization is suspended, or you are no longer a member';
    }
    if (!mayActIn(principal, org.id)) return 'this OAuth2 client may no longer act in the organization';
    const allowed = scopesAllowedFor(org.role ?? 'Owner', standing.isSystemAdmin);
    if (!isScopePermitted(scope, principal.tokenScopes, allowed)) {
      return `the credential no longer grants the scope ${scope}`;
    }
    return null;
  };

  return watchStanding({
    bus: deps.bus,
    intervalMs: deps.intervalMs,
    now: () => deps.clock.now(),
    onError: deps.onError,
    userId: opened.userId,
    organizationId,
    expiresAt: opened.expiresAt,
    reasonToClose,
    onLost,
  });
}

/** The credential the request was authenticated with: its bearer token, or else its session cookie. */
function readCredential(request: FastifyRequest, sessions: SessionVerifier) {
  const match = BEARER.exec((request.headers.authorization ?? '').trim());
  if (match) return { kind: 'bearer' as const, value: match[1]! };
  return { kind: 'session' as const, value: request.cookies?.[sessions.cookieName] ?? '' };
}
