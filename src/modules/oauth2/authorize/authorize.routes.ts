import { randomBytes, randomUUID } from 'node:crypto';
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../../../platform/errors.js';
import { generateOpaqueToken, TOKEN_PREFIX, timingSafeEqualString } from '../../../platform/opaque-token.js';
import { csrfTokenFor, SESSION_COOKIE, setSessionCookie } from '../../sessions/sessions.service.js';
import { holdableScopes, withinHoldable } from '../checks/check-user-scopes.js';
import { isUserActive } from '../grants/grant-context.js';
import {
  AccessDeniedError,
  ConsentRequiredError,
  InvalidScopeError,
  LoginRequiredError,
  type OAuth2Error,
} from '../oauth2-errors.js';
import type { OAuth2Services } from '../oauth2-services.js';
import { PAGE_HEADERS, renderConsentPage, renderErrorPage, renderLoginPage } from './authorize-pages.js';
import {
  type AuthorizationRequest,
  afterSignIn,
  checkAuthorizationRequest,
  redirectWith,
} from './authorize-request.js';

const LOGIN_CSRF_COOKIE = 'meridian_authz_csrf';
const BASE = '/api/v1/oauth2/authorize';
// RFC 6749 §4.1.2 recommends at most 10 minutes; DESIGN.md fixes 60 seconds.
const CODE_TTL_MS = 60_000;
const publicRoute = { access: { public: true as const } };
const schema = (summary: string, description: string) => ({
  tags: ['OAuth2 / OpenID Connect'],
  summary,
  description,
});

type Form = Record<string, string | string[] | undefined>;
const text = (value: string | string[] | undefined) => (typeof value === 'string' ? value : '');

/** `/api/v1/oauth2/authorize`: the authorization code flow with its sign-in and consent pages. */
export const authorizeRoutes: FastifyPluginAsync<{ oauth: OAuth2Services }> = async (app, { oauth }) => {
  const secureCookies = oauth.config.issuer.startsWith('https:');
  const page = (reply: FastifyReply, status: number, html: string) =>
    reply.code(status).headers(PAGE_HEADERS).send(html);
  const redirect = (reply: FastifyReply, url: string) =>
    reply.headers({ 'cache-control': 'no-store' }).redirect(url, 303);
  const redirectError = (reply: FastifyReply, request: AuthorizationRequest, error: OAuth2Error) =>
    redirect(
      reply,
      redirectWith(
        request.redirectUri,
        error.toRedirectParams({ state: request.state, iss: oauth.config.issuer }),
      ),
    );

  /** Validates the parameters; answers the page or error redirect itself when they are not valid. */
  async function check(
    params: URLSearchParams,
    reply: FastifyReply,
  ): Promise<AuthorizationRequest | undefined> {
    const result = await checkAuthorizationRequest(params, oauth.clients);
    if (result.kind === 'page') {
      page(reply, 400, renderErrorPage(result.error));
      return undefined;
    }
    if (result.kind === 'redirect') {
      redirect(
        reply,
        redirectWith(
          result.redirectUri,
          result.error.toRedirectParams({ state: result.state, iss: oauth.config.issuer }),
        ),
      );
      return undefined;
    }
    return result.request;
  }

  /** The signed-in, active user of the console session cookie, with when they signed in. */
  async function currentUser(request: FastifyRequest) {
    const cookie = request.cookies[SESSION_COOKIE];
    if (!cookie) return undefined;
    const principal = await oauth.sessions.verify(cookie);
    if (typeof principal === 'string' || !(await isUserActive(oauth.grantDeps.directory, principal.userId)))
      return undefined;
    const row = await oauth.db
      .selectFrom('sessions as s')
      .innerJoin('users as u', 'u.id', 's.user_id')
      .select(['s.created_at', 'u.email'])
      .where('s.token_hash', '=', principal.credentialId)
      .executeTakeFirst();
    if (!row) return undefined;
    return {
      userId: principal.userId,
      email: row.email,
      authTime: row.created_at,
      csrf: csrfTokenFor(cookie),
    };
  }

  async function issueCode(
    reply: FastifyReply,
    request: AuthorizationRequest,
    user: { userId: string; authTime: number },
    scopes: string[],
  ) {
    const now = oauth.clock.now();
    const grantId = randomUUID();
    await oauth.grants.insertGrant({
      id: grantId,
      client_pk: request.client.id,
      user_id: user.userId,
      scopes: scopes.join(' '),
      auth_time: user.authTime,
      created_at: now,
      revoked_at: null,
    });
    const code = generateOpaqueToken(TOKEN_PREFIX.authorizationCode);
    await oauth.grants.insertCode({
      code_hash: code.hash,
      grant_id: grantId,
      redirect_uri: request.redirectUri,
      redirect_uri_given: request.redirectUriGiven ? 1 : 0,
      scopes: scopes.join(' '),
      nonce: request.nonce ?? null,
      code_challenge: request.pkce?.codeChallenge ?? null,
      expires_at: now + CODE_TTL_MS,
      used_at: null,
    });
    // RFC 9207: iss tells the client which server answered (mix-up defence).
    return redirect(
      reply,
      redirectWith(request.redirectUri, { code: code.value, state: request.state, iss: oauth.config.issuer }),
    );
  }

  /**
   * The requested scopes the user can hold through this client (a Viewer is never shown or granted
   * `system:admin`), or the OAuth2 error to redirect with when the user may act in none of the client's
   * organizations or holds none of the scopes.
   */
  async function holdableRequest(
    authz: AuthorizationRequest,
    userId: string,
  ): Promise<string[] | OAuth2Error> {
    const holdable = await holdableScopes(oauth.db, userId, authz.client.organizationIds);
    if (holdable.organizationIds.length === 0) {
      return new AccessDeniedError('you are not a member of any organization this application may act in');
    }
    const scopes = withinHoldable(authz.scopes, holdable);
    if (scopes.length === 0) return new InvalidScopeError('your role allows none of the requested scopes');
    return scopes;
  }

  /** prompt=login, or a sign-in older than max_age (OIDC Core §3.1.2.1), asks for the password again. */
  function needsFreshSignIn(authz: AuthorizationRequest, authTime: number) {
    if (authz.prompt.has('login')) return true;
    return authz.maxAgeSeconds !== undefined && oauth.clock.now() - authTime > authz.maxAgeSeconds * 1000;
  }

  function showLogin(
    reply: FastifyReply,
    request: AuthorizationRequest,
    status = 200,
    error?: string,
    email?: string,
  ) {
    const csrf = randomBytes(24).toString('base64url');
    reply.setCookie(LOGIN_CSRF_COOKIE, csrf, {
      httpOnly: true,
      sameSite: 'strict',
      secure: secureCookies,
      path: BASE,
    });
    return page(
      reply,
      status,
      renderLoginPage({
        action: `${BASE}/login`,
        request: request.params.toString(),
        csrf,
        appName: request.client.name,
        error,
        email,
      }),
    );
  }

  app.get(
    '/authorize',
    {
      config: publicRoute,
      schema: schema(
        'Authorization endpoint (RFC 6749, OIDC)',
        'Authorization code flow: sign-in page, consent page, redirect with code, state and iss (RFC 9207). PKCE S256 (required for public clients).',
      ),
    },
    async (request, reply) => {
      const params = new URLSearchParams(request.url.split('?')[1] ?? '');
      const authz = await check(params, reply);
      if (!authz) return reply;
      const user = await currentUser(request);
      if (!user || needsFreshSignIn(authz, user.authTime)) {
        if (authz.prompt.has('none')) return redirectError(reply, authz, new LoginRequiredError());
        return showLogin(reply, authz);
      }
      const scopes = await holdableRequest(authz, user.userId);
      if (!Array.isArray(scopes)) return redirectError(reply, authz, scopes);
      const consented = await oauth.grants.findConsent(authz.client.id, user.userId);
      if (consented && !authz.prompt.has('consent') && scopes.every((s) => consented.includes(s))) {
        return issueCode(reply, authz, user, scopes);
      }
      if (authz.prompt.has('none')) return redirectError(reply, authz, new ConsentRequiredError());
      return page(
        reply,
        200,
        renderConsentPage({
          action: `${BASE}/consent`,
          request: params.toString(),
          csrf: user.csrf,
          appName: authz.client.name,
          appDescription: authz.client.description,
          userEmail: user.email,
          scopes,
        }),
      );
    },
  );

  app.post(
    '/authorize/login',
    {
      config: publicRoute,
      schema: schema(
        'Sign in during authorization',
        'Form post of the sign-in page; resumes the authorization request.',
      ),
    },
    async (request, reply) => {
      const body = (request.body ?? {}) as Form;
      const params = new URLSearchParams(text(body.request));
      const authz = await check(params, reply);
      if (!authz) return reply;
      const expected = request.cookies[LOGIN_CSRF_COOKIE] ?? '';
      if (!expected || !timingSafeEqualString(text(body.csrf), expected)) {
        return showLogin(reply, authz, 403, 'The sign-in form expired; please try again.');
      }
      try {
        const session = await oauth.sessions.login(text(body.email), text(body.password), request);
        setSessionCookie(reply, session, secureCookies);
      } catch (error) {
        if (!(error instanceof ApiError)) throw error;
        const message =
          error.statusCode === 429
            ? 'Too many failed attempts; try again later.'
            : 'Email or password is incorrect.';
        return showLogin(reply, authz, error.statusCode, message, text(body.email));
      }
      reply.clearCookie(LOGIN_CSRF_COOKIE, { path: BASE });
      return redirect(reply, `${BASE}?${afterSignIn(params).toString()}`);
    },
  );

  app.post(
    '/authorize/consent',
    {
      config: publicRoute,
      schema: schema(
        'Consent during authorization',
        'Form post of the consent page; the user may grant a subset of the requested scopes.',
      ),
    },
    async (request, reply) => {
      const body = (request.body ?? {}) as Form;
      const params = new URLSearchParams(text(body.request));
      const authz = await check(params, reply);
      if (!authz) return reply;
      const user = await currentUser(request);
      if (!user) return redirect(reply, `${BASE}?${params.toString()}`);
      if (!timingSafeEqualString(text(body.csrf), user.csrf)) {
        return page(
          reply,
          403,
          renderErrorPage(
            'The consent form is not valid for your session; start again from the application.',
          ),
        );
      }
      const chosen = new Set(Array.isArray(body.scope) ? body.scope : body.scope ? [body.scope] : []);
      const holdable = await holdableRequest(authz, user.userId);
      if (!Array.isArray(holdable)) return redirectError(reply, authz, holdable);
      const granted = holdable.filter((s) => chosen.has(s));
      if (text(body.decision) !== 'allow' || granted.length === 0) {
        return redirectError(reply, authz, new AccessDeniedError('the user denied the request'));
      }
      const previous = (await oauth.grants.findConsent(authz.client.id, user.userId)) ?? [];
      await oauth.grants.saveConsent(
        authz.client.id,
        user.userId,
        [...new Set([...previous, ...granted])],
        oauth.clock.now(),
      );
      return issueCode(reply, authz, user, granted);
    },
  );
};
