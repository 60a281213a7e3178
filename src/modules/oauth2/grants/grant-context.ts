import type { Kysely } from 'kysely';
import type { AccessDirectory } from '../../../platform/access-control.js';
import type { Clock } from '../../../platform/clock.js';
import type { Database } from '../../../storage/tables.js';
import { withinHoldable } from '../checks/check-user-scopes.js';
import type { FormParams } from '../clients/client-authentication.js';
import type { StoredClient } from '../clients/clients.repository.js';
import type { RevocationList } from '../introspection/revocation-list.js';
import { InvalidGrantError, InvalidScopeError } from '../oauth2-errors.js';
import type { TokenIssuer } from '../token/token-issuer.js';
import type { GrantsRepository } from './grants.repository.js';
import type { HoldableScopesLookup } from './holdable-scopes-cache.js';

/** What every grant handler needs: the authenticated client, the form, and the services. */
export interface GrantContext {
  client: StoredClient;
  body: FormParams;
  requestId: string;
  deps: GrantDeps;
}

export interface GrantDeps {
  db: Kysely<Database>;
  /** User state, cached and evicted through the invalidation bus. */
  directory: AccessDirectory;
  /** What a user can hold through a client, cached and evicted through the bus. */
  holdable: HoldableScopesLookup;
  clock: Clock;
  grants: GrantsRepository;
  issuer: TokenIssuer;
  revocations: RevocationList;
}

/**
 * True when the user exists, is active and not deleted. Read through the access directory, whose cache a
 * deactivation or deletion evicts at once (on every replica through the bus).
 */
export async function isUserActive(directory: AccessDirectory, userId: string): Promise<boolean> {
  const cached = directory.cachedStanding?.(userId, null);
  // A fresh cached standing answers without a promise; a miss (or a user not found) asks `standing`.
  if (cached !== undefined) return cached.userActive;
  const standing = await directory.standing(userId, null);
  return standing?.userActive === true;
}

/** Revokes a grant and every unexpired access token it produced (code replay, refresh token reuse). */
export async function revokeGrant(deps: GrantDeps, grantId: string): Promise<void> {
  const tokens = await deps.grants.revokeGrant(grantId, deps.clock.now());
  await deps.revocations.revokeTokens(tokens);
}

/**
 * The scopes of a token about to be issued to `userId` through `client` (issue 25): the user must be able
 * to act in at least one organization the client is bound to, and the scopes are cut to what the user's
 * roles there allow. Every grant calls it, so a role lost or a binding narrowed applies at the next refresh.
 */
export async function scopesToIssue(
  deps: GrantDeps,
  client: StoredClient,
  userId: string,
  scopes: readonly string[],
): Promise<string[]> {
  const holdable = await deps.holdable.holdable(userId, client.organizationIds);
  if (holdable.organizationIds.length === 0) {
    throw new InvalidGrantError('the user is not a member of any active organization this client may act in');
  }
  const granted = withinHoldable(scopes, holdable);
  if (granted.length === 0 && scopes.length > 0) {
    throw new InvalidScopeError("none of the requested scopes is within what the user's role allows");
  }
  return granted;
}
