import type { OrganizationRole } from '../storage/tables.js';

/** Scopes Meridian itself defines (DESIGN.md "Identity and access"); anything else is a custom scope. */
export const KNOWN_SCOPES = [
  'openid',
  'profile',
  'email',
  'uns:read',
  'uns:write',
  'uns:publish',
  'pipelines:read',
  'pipelines:write',
  'models:read',
  'models:write',
  'connectors:read',
  'connectors:write',
  'dashboards:read',
  'dashboards:write',
  'organizations:read',
  'organizations:write',
  'users:read',
  'users:write',
  'tokens:read',
  'tokens:write',
  'system:admin',
] as const;

const VIEWER = [
  'openid',
  'profile',
  'email',
  'uns:read',
  'pipelines:read',
  'models:read',
  'connectors:read',
  'dashboards:read',
  'organizations:read',
  'tokens:read',
  'tokens:write',
];
const EDITOR = [
  ...VIEWER,
  'uns:write',
  'uns:publish',
  'pipelines:write',
  'models:write',
  'connectors:write',
  'dashboards:write',
];
const ADMIN = [...EDITOR, 'users:read', 'users:write'];
const OWNER = [...ADMIN, 'organizations:write'];

/** What each organization role allows. A System Administrator is allowed every scope. */
export const ROLE_SCOPES: Record<OrganizationRole, ReadonlySet<string>> = {
  Viewer: new Set(VIEWER),
  Editor: new Set(EDITOR),
  Admin: new Set(ADMIN),
  Owner: new Set(OWNER),
};

export const ALL_SCOPES: ReadonlySet<string> = new Set(KNOWN_SCOPES);
const KNOWN: ReadonlySet<string> = ALL_SCOPES;

/** Scopes a role allows, plus `system:admin` and everything else for a System Administrator. */
export function scopesAllowedFor(role: OrganizationRole | null, isSystemAdmin: boolean): ReadonlySet<string> {
  if (isSystemAdmin) return ALL_SCOPES;
  return role ? ROLE_SCOPES[role] : new Set();
}

/**
 * Whether a credential may use `scope`: the token must carry it (a console session carries all), and the
 * caller's role must allow it. Custom scopes are not governed by roles.
 */
export function isScopePermitted(
  scope: string,
  tokenScopes: ReadonlySet<string> | null,
  allowed: ReadonlySet<string>,
): boolean {
  if (tokenScopes && !tokenScopes.has(scope)) return false;
  return allowed.has(scope) || !KNOWN.has(scope);
}

const CUSTOM_SCOPE = /^[a-z][a-z0-9:._-]{0,63}$/;

/** True for a well-formed administrator-defined scope: 1-64 of [a-z0-9:._-], starting with a letter. */
export function isValidCustomScope(scope: string): boolean {
  return typeof scope === 'string' && CUSTOM_SCOPE.test(scope);
}
