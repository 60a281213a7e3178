import type { Kysely } from 'kysely';
import { ALL_SCOPES, scopesAllowedFor } from '../../../platform/permissions.js';
import type { Database } from '../../../storage/tables.js';
import { OIDC_SCOPES } from './check-scope.js';

/** What a user can hold through a credential: where it may act, and the scopes of its roles there. */
export interface HoldableScopes {
  /** Active organizations the credential may act in (within a client's binding, when there is one). */
  organizationIds: string[];
  /** The union of what the user's roles allow in them; every scope for a System Administrator. */
  allowed: ReadonlySet<string>;
}

/**
 * The organizations a user may act in through a credential and the scopes their roles allow there: the
 * user's active memberships, within `boundOrganizations` when the credential comes from a client bound to
 * them. A System Administrator acts as Owner in every active organization of that set (or every one).
 */
export async function holdableScopes(
  db: Kysely<Database>,
  userId: string,
  boundOrganizations: readonly string[] | null,
): Promise<HoldableScopes> {
  if (boundOrganizations !== null && boundOrganizations.length === 0) {
    return { organizationIds: [], allowed: new Set() };
  }
  const user = await db
    .selectFrom('users')
    .select(['is_system_admin', 'status'])
    .where('id', '=', userId)
    .where('deleted_at', 'is', null)
    .executeTakeFirst();
  if (user?.status !== 'active') return { organizationIds: [], allowed: new Set() };
  if (user.is_system_admin === 1) {
    let query = db.selectFrom('organizations').select('id').where('status', '=', 'active');
    if (boundOrganizations) query = query.where('id', 'in', boundOrganizations);
    const rows = await query.execute();
    return { organizationIds: rows.map((r) => r.id), allowed: ALL_SCOPES };
  }
  let query = db
    .selectFrom('memberships as m')
    .innerJoin('organizations as o', 'o.id', 'm.organization_id')
    .select(['m.organization_id', 'm.role'])
    .where('m.user_id', '=', userId)
    .where('o.status', '=', 'active');
  if (boundOrganizations) query = query.where('m.organization_id', 'in', boundOrganizations);
  const rows = await query.execute();
  const allowed = new Set<string>();
  for (const row of rows) for (const scope of scopesAllowedFor(row.role, false)) allowed.add(scope);
  return { organizationIds: rows.map((r) => r.organization_id), allowed };
}

/**
 * The scopes a user can hold among `scopes`: those a role of theirs allows, the OpenID Connect scopes
 * (always available), and custom scopes (not governed by roles). A Viewer is never given `system:admin`.
 */
export function withinHoldable(scopes: readonly string[], holdable: HoldableScopes): string[] {
  return scopes.filter(
    (scope) => holdable.allowed.has(scope) || OIDC_SCOPES.includes(scope) || !ALL_SCOPES.has(scope),
  );
}

/** The scopes among `scopes` that no role of the user allows (what `withinHoldable` drops). */
export function beyondHoldable(scopes: readonly string[], holdable: HoldableScopes): string[] {
  const kept = new Set(withinHoldable(scopes, holdable));
  return scopes.filter((scope) => !kept.has(scope));
}
