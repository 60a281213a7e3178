import { InvalidScopeError } from '../oauth2-errors.js';

/** A scope Meridian defines, with the line shown on the consent screen and in discovery. */
export interface ScopeDefinition {
  name: string;
  description: string;
}

/** Every built-in scope (DESIGN.md "Identity and access"), in display order. */
export const KNOWN_SCOPES: readonly ScopeDefinition[] = Object.freeze([
  { name: 'openid', description: 'Sign you in and confirm your identity' },
  { name: 'profile', description: 'Read your name and basic profile' },
  { name: 'email', description: 'Read your email address' },
  { name: 'uns:read', description: 'Read unified namespace topics, values and history' },
  { name: 'uns:write', description: 'Create, change and delete unified namespace topics and schemas' },
  { name: 'uns:publish', description: 'Publish values to unified namespace topics' },
  { name: 'pipelines:read', description: 'View pipelines and their executions' },
  { name: 'pipelines:write', description: 'Create, change, run and delete pipelines' },
  { name: 'models:read', description: 'View data models' },
  { name: 'models:write', description: 'Create, change and delete data models' },
  { name: 'connectors:read', description: 'View connections and their status' },
  { name: 'connectors:write', description: 'Create, change, start, stop and delete connections' },
  { name: 'dashboards:read', description: 'View dashboards' },
  { name: 'dashboards:write', description: 'Create, change and delete dashboards' },
  { name: 'organizations:read', description: 'View organizations and their settings' },
  { name: 'organizations:write', description: 'Change organizations and their settings' },
  { name: 'users:read', description: 'View users and their roles' },
  { name: 'users:write', description: 'Create, change and delete users' },
  { name: 'tokens:read', description: 'View your personal access tokens' },
  { name: 'tokens:write', description: 'Create and revoke your personal access tokens' },
  {
    name: 'system:admin',
    description: 'Administer the system: OAuth2 clients and unified namespace settings',
  },
]);

/** The OIDC scopes, always available (spec: Authentication, rule 4). */
export const OIDC_SCOPES: readonly string[] = Object.freeze(['openid', 'profile', 'email']);

const KNOWN_SCOPE_NAMES = new Set(KNOWN_SCOPES.map((scope) => scope.name));

// RFC 6749 §3.3: scope-token = 1*( %x21 / %x23-5B / %x5D-7E ).
const SCOPE_TOKEN = /^[\x21\x23-\x5b\x5d-\x7e]+$/;

/**
 * Parses a scope parameter (RFC 6749 §3.3): tokens separated by single spaces. An absent or empty
 * parameter gives []. Returns the tokens de-duplicated in first-seen order; throws invalid_scope.
 * A client asks for the same few scope strings on every token request: their parses are remembered.
 */
export function parseScope(scopeParam: string | null | undefined): readonly string[] {
  if (scopeParam === undefined || scopeParam === null || scopeParam === '') return NO_SCOPES;
  if (typeof scopeParam !== 'string') throw new InvalidScopeError('scope must be a string');
  let scopes = parsedScopes.get(scopeParam);
  if (scopes === undefined) {
    scopes = Object.freeze(parseScopeText(scopeParam));
    // Bounded: anyone can send scope strings; a full cache starts over.
    if (parsedScopes.size >= PARSED_SCOPES_LIMIT) parsedScopes.clear();
    parsedScopes.set(scopeParam, scopes);
  }
  return scopes;
}

const NO_SCOPES: readonly string[] = Object.freeze([]);
const PARSED_SCOPES_LIMIT = 1_000;
const parsedScopes = new Map<string, readonly string[]>();

function parseScopeText(scopeParam: string): string[] {
  const tokens = scopeParam.split(' ');
  const seen = new Set<string>();
  for (const [index, token] of tokens.entries()) {
    if (token === '') {
      throw new InvalidScopeError(
        'scope values must be separated by single spaces, without leading or trailing space',
      );
    }
    if (!SCOPE_TOKEN.test(token)) {
      throw new InvalidScopeError(
        `scope value ${index + 1} contains a character not allowed by RFC 6749 section 3.3`,
      );
    }
    seen.add(token);
  }
  return [...seen];
}

/** Throws invalid_scope naming every requested scope that is not in `allowed`. */
export function requireScopesWithin(requested: readonly string[], allowed: readonly string[]): void {
  // A client asks for a few scopes on every token request: a scan of its list is cheaper than a Set built
  // each time. Long lists (anyone authenticated may send thousands) take the Set, linear in both.
  let refused: string[];
  if (requested.length <= 8) {
    if (requested.every((scope) => allowed.includes(scope))) return;
    refused = requested.filter((scope) => !allowed.includes(scope));
  } else {
    const allowedSet = new Set(allowed);
    refused = requested.filter((scope) => !allowedSet.has(scope));
  }
  if (refused.length > 0) {
    const noun = refused.length === 1 ? 'scope' : 'scopes';
    throw new InvalidScopeError(`${noun} not allowed for this client: ${formatScope([...new Set(refused)])}`);
  }
}

/** Joins scopes with single spaces, as in the token response and the `scope` claim. */
export function formatScope(scopes: readonly string[]): string {
  return scopes.join(' ');
}

/** True for a built-in scope. */
export function isKnownScope(scope: string): boolean {
  return KNOWN_SCOPE_NAMES.has(scope);
}
