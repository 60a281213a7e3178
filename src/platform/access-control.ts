import type { FastifyInstance, FastifyRequest, onRequestHookHandler } from 'fastify';
import type { OrganizationRole } from '../storage/tables.js';
import { csrfRejected, insufficientScope, missingOrganization, unauthorized } from './errors.js';
import { timingSafeEqualString } from './opaque-token.js';
import { isScopePermitted, scopesAllowedFor } from './permissions.js';

export type CredentialKind = 'session' | 'access_token' | 'personal_access_token';

/** Who is calling, as established by a verified credential. */
export interface Principal {
  userId: string;
  credential: CredentialKind;
  /** Scopes the credential carries; `null` for a console session (it carries all its role allows). */
  tokenScopes: ReadonlySet<string> | null;
  clientId: string | null;
  /** Stable id of the credential (session hash, token jti, PAT id), for audit and revocation. */
  credentialId: string;
  /** For a session: the CSRF token its unsafe requests must echo in `X-CSRF-Token`. */
  csrfToken?: string;
  /** When the credential expires (epoch ms), where it does. */
  expiresAt?: number;
  /**
   * For a token issued to an OAuth2 client: the organizations that client may act in. Any other
   * organization is answered like one the caller is not a member of.
   */
  organizationIds?: ReadonlySet<string>;
}

/** Whether a credential may act in `organizationId` (its client's binding; other credentials: any). */
export function mayActIn(principal: Principal, organizationId: string): boolean {
  return principal.organizationIds === undefined || principal.organizationIds.has(organizationId);
}

/** Verifies one kind of bearer credential. `accepts` is a cheap shape test; `verify` answers a reason when invalid. */
export interface BearerVerifier {
  accepts(token: string): boolean;
  verify(token: string, request: FastifyRequest): Promise<Principal | string>;
  /**
   * The principal of a token this verifier has verified before and that is still valid now (unexpired, not
   * revoked), without a promise; undefined when it is not cached or no longer valid, and `verify` decides.
   */
  verifyCached?(token: string): Principal | undefined;
}

/** Verifies the console's session cookie. Answers a Principal, or a reason string when it is not valid. */
export interface SessionVerifier {
  cookieName: string;
  verify(cookieValue: string, request: FastifyRequest): Promise<Principal | string>;
}

/** The account state and organization standing that every request is checked against. */
export interface CallerStanding {
  userActive: boolean;
  isSystemAdmin: boolean;
  /** Present when the organization exists and is active; role is null when the caller is not a member. */
  organization: { id: string; role: OrganizationRole | null } | null;
}

export interface AccessDirectory {
  /** One read: the user's state and, when `organizationId` is given, their standing in it. Undefined: no such user. */
  standing(userId: string, organizationId: string | null): Promise<CallerStanding | undefined>;
  /** The standing when a fresh one is cached, without a promise; undefined when `standing` must read it. */
  cachedStanding?(userId: string, organizationId: string | null): CallerStanding | undefined;
}

/** How a route is protected; required on every `/api/v1` route. */
export type RouteAccess =
  | { public: true }
  | {
      /** The scope the operation requires; `null` when any authenticated caller may use it. */
      scope: string | null;
      /** Whether the X-Organization-ID header applies (default true; false only for identity routes). */
      organization?: boolean;
      /** Whether only System Administrators may call it. */
      systemAdmin?: boolean;
    };

export interface OrganizationContext {
  id: string;
  /** The caller's role; a System Administrator who is not a member acts as Owner. */
  role: OrganizationRole;
}

declare module 'fastify' {
  interface FastifyContextConfig {
    access?: RouteAccess;
  }
  interface FastifyRequest {
    principal: Principal | null;
    organization: OrganizationContext | null;
    isSystemAdmin: boolean;
    /** Scopes this request may use: token scopes within what the caller's role allows. */
    grantedScopes: ReadonlySet<string>;
  }
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

export interface AccessControlOptions {
  directory: AccessDirectory;
  bearerVerifiers: BearerVerifier[];
  sessionVerifier: SessionVerifier;
}

/** A bearer Authorization header that passed the shape check, and the verifier that caches its token. */
interface KnownBearerHeader {
  header: string;
  verifier: BearerVerifier & Required<Pick<BearerVerifier, 'verifyCached'>>;
  token: string;
}

const KNOWN_HEADERS_MAX = 10_000;
// Known headers are indexed by their last characters (the token's signature, distinct per token), and the
// entry then confirms the whole string: hashing a whole header (an access token is ~560 characters) as a
// Map key costs about a microsecond, more than everything else on the cached path.
const HEADER_INDEX_CHARS = 32;

/**
 * The request contract of DESIGN.md, in its order: authentication (401), organization (422),
 * permission (403). Runs in onRequest, before the body is read, so these answers precede 400 and 413.
 */
export function installAccessControl(app: FastifyInstance, options: AccessControlOptions): void {
  app.decorateRequest('principal', null);
  app.decorateRequest('organization', null);
  app.decorateRequest('isSystemAdmin', false);
  app.decorateRequest('grantedScopes', null as unknown as ReadonlySet<string>);

  // An entry proves that exactly its header string passed the Bearer shape check once. It says nothing
  // about validity: the verifier answers that on every request.
  const knownHeaders = new Map<string, KnownBearerHeader>();
  const remember = (header: string, token: string, verifier: BearerVerifier) => {
    if (!verifier.verifyCached) return;
    const key = header.slice(-HEADER_INDEX_CHARS);
    if (knownHeaders.get(key)?.header === header) return;
    if (knownHeaders.size >= KNOWN_HEADERS_MAX)
      knownHeaders.delete(knownHeaders.keys().next().value as string);
    knownHeaders.set(key, { header, verifier: verifier as KnownBearerHeader['verifier'], token });
  };

  // Each protected route gets its own onRequest hook bound to its rule, ahead of its other onRequest
  // hooks: a global hook read the rule through request.routeOptions, a getter that builds an object of
  // thirteen fields on every request.
  app.addHook('onRoute', (route) => {
    const access = route.config?.access;
    if (route.url.startsWith('/api/v1/') && !access) {
      throw new Error(`route ${route.method} ${route.url} declares no access rule`);
    }
    // Public routes (health, the OAuth2 protocol endpoints) pay no hook for this.
    if (!access || 'public' in access) return;
    const hook: onRequestHookHandler = (request, _reply, done) => {
      // A token and a standing already cached decide the request without a promise.
      let decided: boolean;
      try {
        decided = checkAccessFromCache(request, access, options, knownHeaders);
      } catch (error) {
        return done(error as Error);
      }
      if (decided) return done();
      checkAccess(request, access, options, remember).then(() => done(), done);
    };
    const own = route.onRequest;
    route.onRequest = own === undefined ? [hook] : [hook, ...(Array.isArray(own) ? own : [own])];
  });
}

type ProtectedAccess = Exclude<RouteAccess, { public: true }>;

/**
 * The contract from caches only: true when the request is authorized, false when something is not cached
 * (the caller then takes `checkAccess`). Throws what `checkAccess` would for the same cached state.
 */
function checkAccessFromCache(
  request: FastifyRequest,
  access: ProtectedAccess,
  options: AccessControlOptions,
  knownHeaders: ReadonlyMap<string, KnownBearerHeader>,
): boolean {
  const header = request.headers.authorization;
  if (header === undefined || !options.directory.cachedStanding) return false;
  const known = knownHeaders.get(header.slice(-HEADER_INDEX_CHARS));
  if (known === undefined || known.header !== header) return false;
  const principal = known.verifier.verifyCached(known.token);
  if (!principal) return false;
  const wantsOrganization = access.organization !== false;
  let organizationId: string | null = null;
  if (wantsOrganization) {
    const value = request.headers['x-organization-id'];
    if (typeof value !== 'string') return false;
    organizationId = value;
  }
  const standing = options.directory.cachedStanding(principal.userId, organizationId);
  if (!standing) return false;
  // Organization ids are lowercase UUIDs (randomUUID), so a header equal to the id the lookup found is
  // exactly what readOrganizationHeader would answer; any other header takes the slow path and its checks.
  if (wantsOrganization && standing.organization?.id !== organizationId) return false;
  authorize(request, access, principal, organizationId, standing);
  return true;
}

/** Authentication, organization and permission of one request, in the contract's order. */
async function checkAccess(
  request: FastifyRequest,
  access: ProtectedAccess,
  options: AccessControlOptions,
  remember: (header: string, token: string, verifier: BearerVerifier) => void,
): Promise<void> {
  const principal = await authenticate(request, options, remember);
  const wantsOrganization = access.organization !== false;
  const organizationId = wantsOrganization ? readOrganizationHeader(request) : null;
  const standing = await options.directory.standing(principal.userId, organizationId);
  authorize(request, access, principal, organizationId, standing);
}

/** Organization and permission checks once the principal and its standing are known. */
function authorize(
  request: FastifyRequest,
  access: ProtectedAccess,
  principal: Principal,
  organizationId: string | null,
  standing: CallerStanding | undefined,
): void {
  if (!standing?.userActive) throw unauthorized('the account behind this credential is not active');
  request.principal = principal;
  request.isSystemAdmin = standing.isSystemAdmin;

  let role: OrganizationRole | null = null;
  if (access.organization !== false) {
    const org = standing.organization;
    if (!organizationId || !org || (!org.role && !standing.isSystemAdmin)) throw missingOrganization();
    if (!mayActIn(principal, org.id)) throw missingOrganization();
    role = org.role ?? 'Owner';
    request.organization = { id: org.id, role };
  }

  const allowed = scopesAllowedFor(role, standing.isSystemAdmin);
  request.grantedScopes = principal.tokenScopes ? grantedWithin(principal.tokenScopes, allowed) : allowed;
  if (access.systemAdmin && !standing.isSystemAdmin) throw insufficientScope('the System Administrator role');
  if (access.scope && !isScopePermitted(access.scope, principal.tokenScopes, allowed)) {
    throw insufficientScope(`the scope ${access.scope}`, access.scope);
  }
}

// Both sets are immutable and live as long as the cached token and the role table, so the answer for a
// pair is computed once; weak keys let it go with the token.
const grantedMemo = new WeakMap<ReadonlySet<string>, WeakMap<ReadonlySet<string>, ReadonlySet<string>>>();

/** The token's scopes that the caller's role allows (custom scopes always), memoized per pair of sets. */
function grantedWithin(tokenScopes: ReadonlySet<string>, allowed: ReadonlySet<string>): ReadonlySet<string> {
  let byAllowed = grantedMemo.get(tokenScopes);
  if (!byAllowed) {
    byAllowed = new WeakMap();
    grantedMemo.set(tokenScopes, byAllowed);
  }
  let granted = byAllowed.get(allowed);
  if (!granted) {
    granted = new Set([...tokenScopes].filter((s) => isScopePermitted(s, tokenScopes, allowed)));
    byAllowed.set(allowed, granted);
  }
  return granted;
}

async function authenticate(
  request: FastifyRequest,
  options: AccessControlOptions,
  remember: (header: string, token: string, verifier: BearerVerifier) => void,
): Promise<Principal> {
  const header = request.headers.authorization;
  if (header !== undefined) {
    const match = /^Bearer ([A-Za-z0-9\-._~+/]+=*)$/i.exec(header.trim());
    if (!match) throw unauthorized('the Authorization header must be "Bearer <token>"', 'invalid_token');
    const token = match[1]!;
    const verifier = options.bearerVerifiers.find((v) => v.accepts(token));
    if (!verifier) throw unauthorized('the bearer token is not recognised', 'invalid_token');
    const result = await verifier.verify(token, request);
    if (typeof result === 'string') throw unauthorized(result, 'invalid_token');
    remember(header, token, verifier);
    return result;
  }
  const cookie = request.cookies?.[options.sessionVerifier.cookieName];
  if (cookie) {
    const result = await options.sessionVerifier.verify(cookie, request);
    if (typeof result === 'string') throw unauthorized(result);
    const echoed = request.headers['x-csrf-token'];
    if (
      !SAFE_METHODS.has(request.method) &&
      !timingSafeEqualString(String(echoed ?? ''), result.csrfToken ?? '')
    ) {
      throw csrfRejected();
    }
    return result;
  }
  throw unauthorized('authentication required: send Authorization: Bearer <token>');
}

/** The organization id from the header, or null when it is missing or malformed (answered 422 after 401 checks). */
function readOrganizationHeader(request: FastifyRequest): string | null {
  const value = request.headers['x-organization-id'];
  if (typeof value !== 'string' || !UUID.test(value.trim())) return null;
  return value.trim().toLowerCase();
}
