import type { Kysely } from 'kysely';
import type { AccessDirectory } from '../../../platform/access-control.js';
import type { Clock } from '../../../platform/clock.js';
import type { Database } from '../../../storage/tables.js';
import type { FormParams } from '../clients/client-authentication.js';
import type { StoredClient } from '../clients/clients.repository.js';
import type { RevocationList } from '../introspection/revocation-list.js';
import type { TokenIssuer } from '../token/token-issuer.js';
import type { GrantsRepository } from './grants.repository.js';

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
  const standing = await directory.standing(userId, null);
  return standing?.userActive === true;
}

/** Revokes a grant and every unexpired access token it produced (code replay, refresh token reuse). */
export async function revokeGrant(deps: GrantDeps, grantId: string): Promise<void> {
  const tokens = await deps.grants.revokeGrant(grantId, deps.clock.now());
  await deps.revocations.revokeTokens(tokens);
}
