import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { testDialects } from '../helpers/dialects.js';
import { addMember, type BuiltUser, buildUser } from '../helpers/factories.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';
import {
  authorizeInBrowser,
  authorizeUrl,
  Browser,
  codeFlow,
  pkcePair,
  postForm,
  REDIRECT_URI,
  type RegisteredClient,
  readForm,
  registerClient,
} from './oauth2-helpers.js';

const TOKEN = '/api/v1/oauth2/token';

for (const dialect of testDialects()) {
  describe(`authorization code flow [${dialect}]`, () => {
    let server: TestServer;
    let client: RegisteredClient;
    let user: BuiltUser;
    const clock = { offset: 0, now: () => Date.now() + clock.offset };

    before(async () => {
      server = await startTestServer(dialect, { clock });
      client = await registerClient(server);
      user = await buildUser(server);
      await addMember(server, server.orgId, user.id, 'Editor');
    });
    after(() => server?.close());

    const api = (token: string) => server.client.get('/api/v1/organizations', { token, org: server.orgId });
    const exchange = (
      code: string,
      verifier: string,
      c: RegisteredClient = client,
      extra: Record<string, string> = {},
    ) =>
      postForm(server, TOKEN, {
        grant_type: 'authorization_code',
        code,
        redirect_uri: REDIRECT_URI,
        code_verifier: verifier,
        client_id: c.clientId,
        ...(c.clientSecret ? { client_secret: c.clientSecret } : {}),
        ...extra,
      });
    const refresh = (token: string, extra: Record<string, string> = {}, c: RegisteredClient = client) =>
      postForm(server, TOKEN, {
        grant_type: 'refresh_token',
        refresh_token: token,
        client_id: c.clientId,
        ...(c.clientSecret ? { client_secret: c.clientSecret } : {}),
        ...extra,
      });
    const start = (params: Record<string, string | undefined>, c: RegisteredClient = client) => {
      const pkce = pkcePair();
      return authorizeUrl(server, {
        response_type: 'code',
        client_id: c.clientId,
        redirect_uri: REDIRECT_URI,
        scope: 'openid uns:read',
        state: 's1',
        code_challenge: pkce.challenge,
        code_challenge_method: 'S256',
        ...params,
      });
    };

    describe('the happy path', () => {
      it('logs in, consents, redirects with code, state and iss, and issues tokens', async () => {
        const { location, token } = await codeFlow(server, client, user, {
          scope: 'openid profile organizations:read',
        });
        const url = new URL(location);
        assert.equal(`${url.origin}${url.pathname}`, REDIRECT_URI);
        assert.equal(url.searchParams.get('state'), 'xyz');
        assert.equal(url.searchParams.get('iss'), server.url);
        assert.equal(token.status, 200);
        assert.deepEqual(Object.keys(token.body).sort(), [
          'access_token',
          'expires_in',
          'id_token',
          'refresh_token',
          'scope',
          'token_type',
        ]);
        assert.equal(token.body.scope, 'openid profile organizations:read');
        const idClaims = JSON.parse(Buffer.from(token.body.id_token.split('.')[1], 'base64url').toString());
        assert.equal(idClaims.nonce, 'n-0S6');
        assert.equal(idClaims.aud, client.clientId);
        assert.equal(idClaims.sub, user.id);
        assert.equal((await api(token.body.access_token)).status, 200);
      });

      it('serves pages that cannot be framed', async () => {
        const page = await new Browser(server.url).request(start({}));
        assert.equal(page.status, 200);
        assert.equal(page.headers.get('x-frame-options'), 'DENY');
        assert.match(page.headers.get('content-security-policy') ?? '', /frame-ancestors 'none'/);
      });

      it('shows the app name, description and scopes, lets the user grant a subset, and remembers it', async () => {
        const app = await registerClient(server, {
          name: 'Shift <b>report</b>',
          description: 'Reads the line',
        });
        const browser = new Browser(server.url);
        await browser.request('/');
        const first = await browser.request(start({ scope: 'openid uns:read organizations:read' }, app));
        const login = readForm(first.text);
        const afterLogin = await browser.request(login.action, {
          form: { ...login.fields, email: user.email, password: user.password },
        });
        const consentPage = await browser.request(afterLogin.location!);
        assert.match(consentPage.text, /Shift &#60;b&#62;report&#60;\/b&#62;/);
        assert.match(consentPage.text, /Reads the line/);
        assert.deepEqual(readForm(consentPage.text).scopes, ['openid', 'uns:read', 'organizations:read']);
        const form = readForm(consentPage.text);
        const done = await browser.request(form.action, {
          form: { ...form.fields, scope: ['openid', 'organizations:read'], decision: 'allow' },
        });
        const pkceCode = new URL(done.location!).searchParams.get('code');
        assert.ok(pkceCode);
        // Same or fewer scopes: no consent page again.
        const again = await browser.request(start({ scope: 'openid organizations:read' }, app));
        assert.equal(again.status, 303);
        assert.ok(new URL(again.location!).searchParams.get('code'));
        // More scopes than consented: asked again.
        const more = await browser.request(start({ scope: 'openid uns:read' }, app));
        assert.equal(more.status, 200);
        assert.match(more.text, /name="decision"/);
      });

      it('grants only the chosen scopes', async () => {
        const { token } = await codeFlow(server, client, user, {
          scope: 'openid uns:read organizations:read',
          grant: ['openid', 'uns:read'],
        });
        assert.equal(token.body.scope, 'openid uns:read');
      });

      it('redirects access_denied when the user denies', async () => {
        const app = await registerClient(server);
        const browser = new Browser(server.url);
        const page = await browser.request(start({}, app));
        const login = readForm(page.text);
        const consent = await browser.request(
          (
            await browser.request(login.action, {
              form: { ...login.fields, email: user.email, password: user.password },
            })
          ).location!,
        );
        const form = readForm(consent.text);
        const denied = await browser.request(form.action, { form: { ...form.fields, decision: 'deny' } });
        assert.equal(new URL(denied.location!).searchParams.get('error'), 'access_denied');
        assert.equal(new URL(denied.location!).searchParams.get('state'), 's1');
      });

      it('refuses a consent post without the CSRF token of the session', async () => {
        const app = await registerClient(server);
        const browser = new Browser(server.url);
        const page = await browser.request(start({}, app));
        const login = readForm(page.text);
        const consent = await browser.request(
          (
            await browser.request(login.action, {
              form: { ...login.fields, email: user.email, password: user.password },
            })
          ).location!,
        );
        const form = readForm(consent.text);
        const forged = await browser.request(form.action, {
          form: { ...form.fields, csrf: 'forged', scope: form.scopes, decision: 'allow' },
        });
        assert.equal(forged.status, 403);
        assert.equal(forged.location, null);
      });

      it('answers login_required for prompt=none without a session', async () => {
        const res = await new Browser(server.url).request(start({ prompt: 'none' }));
        assert.equal(res.status, 303);
        assert.equal(new URL(res.location!).searchParams.get('error'), 'login_required');
      });
    });

    describe('prompt and max_age (OIDC Core 3.1.2.1)', () => {
      /** A browser whose user signed in and consented to `openid uns:read` for the client. */
      async function signedInBrowser() {
        const browser = new Browser(server.url);
        await authorizeInBrowser(browser, start({}), user);
        const again = await browser.request(start({}));
        assert.equal(again.status, 303, 'a signed-in, consented user is sent straight back');
        return browser;
      }
      const idClaimsOf = async (location: string, verifier: string) => {
        const token = await exchange(new URL(location).searchParams.get('code')!, verifier);
        assert.equal(token.status, 200);
        return JSON.parse(Buffer.from(token.body.id_token.split('.')[1], 'base64url').toString());
      };
      const startWith = (params: Record<string, string>) => {
        const pkce = pkcePair();
        return {
          pkce,
          url: start({ code_challenge: pkce.challenge, ...params }),
        };
      };

      it('prompt=login asks for the password again despite a session, then issues a code once', async () => {
        const browser = await signedInBrowser();
        clock.offset += 5_000;
        try {
          const { url, pkce } = startWith({ prompt: 'login' });
          const page = await browser.request(url);
          assert.equal(page.status, 200);
          assert.match(page.text, /name="password"/);
          const form = readForm(page.text);
          const wrong = await browser.request(form.action, {
            form: { ...form.fields, email: user.email, password: 'not-the-password' },
          });
          assert.equal(wrong.status, 401);
          const retry = readForm(wrong.text);
          const login = await browser.request(retry.action, {
            form: { ...retry.fields, email: user.email, password: user.password },
          });
          assert.equal(login.status, 303);
          assert.doesNotMatch(login.location!, /prompt=login/);
          const back = await browser.request(login.location!);
          assert.equal(back.status, 303, 'after signing in the flow goes on, not back to the sign-in page');
          const claims = await idClaimsOf(back.location!, pkce.verifier);
          assert.ok(
            claims.auth_time >= Math.floor(clock.now() / 1000) - 1,
            'auth_time is the new sign-in, not the session of five seconds ago',
          );
        } finally {
          clock.offset -= 5_000;
        }
      });

      it('max_age: a recent sign-in is accepted, an older one must sign in again', async () => {
        const browser = await signedInBrowser();
        const recent = await browser.request(startWith({ max_age: '60' }).url);
        assert.equal(recent.status, 303);
        assert.ok(new URL(recent.location!).searchParams.get('code'));
        clock.offset += 120_000;
        try {
          const stale = await browser.request(startWith({ max_age: '60' }).url);
          assert.equal(stale.status, 200);
          assert.match(stale.text, /name="password"/);
          const none = await browser.request(startWith({ max_age: '60', prompt: 'none' }).url);
          assert.equal(new URL(none.location!).searchParams.get('error'), 'login_required');
          const { url, pkce } = startWith({ max_age: '60' });
          const location = await authorizeInBrowser(browser, url, user);
          const claims = await idClaimsOf(location, pkce.verifier);
          assert.ok(Math.floor(clock.now() / 1000) - claims.auth_time <= 60);
        } finally {
          clock.offset -= 120_000;
        }
      });

      it('max_age=0 always asks for the password', async () => {
        const browser = await signedInBrowser();
        clock.offset += 1_000;
        try {
          const page = await browser.request(startWith({ max_age: '0' }).url);
          assert.equal(page.status, 200);
          assert.match(page.text, /name="password"/);
        } finally {
          clock.offset -= 1_000;
        }
      });

      it('prompt=consent shows the consent page although consent was given', async () => {
        const browser = await signedInBrowser();
        const page = await browser.request(startWith({ prompt: 'consent' }).url);
        assert.equal(page.status, 200);
        assert.match(page.text, /name="decision"/);
      });

      for (const [label, params, pattern] of [
        ['prompt=none with login', { prompt: 'none login' }, /prompt=none/],
        ['an unknown prompt value', { prompt: 'select_account' }, /select_account/],
        ['a negative max_age', { max_age: '-1' }, /max_age/],
        ['a fractional max_age', { max_age: '1.5' }, /max_age/],
        ['a word as max_age', { max_age: 'soon' }, /max_age/],
        ['a repeated max_age', { max_age: '5', 'max_age ': '' }, /max_age/],
      ] as const) {
        it(`redirects invalid_request for ${label}`, async () => {
          const url = new URL(startWith({}).url);
          for (const [k, v] of Object.entries(params)) {
            if (k.endsWith(' ')) url.searchParams.append(k.trim(), '6');
            else url.searchParams.set(k, v);
          }
          const res = await new Browser(server.url).request(url.toString());
          assert.equal(res.status, 303);
          const error = new URL(res.location!).searchParams;
          assert.equal(error.get('error'), 'invalid_request');
          assert.match(error.get('error_description') ?? '', pattern);
          assert.equal(error.get('state'), 's1');
        });
      }
    });

    describe('redirect URI (shown, never redirected)', () => {
      const variants: [string, string][] = [
        ['a prefix', 'http://127.0.0.1:9999/callback/extra'],
        ['a shorter prefix', 'http://127.0.0.1:9999/call'],
        ['another case', 'http://127.0.0.1:9999/Callback'],
        ['a trailing slash', 'http://127.0.0.1:9999/callback/'],
        ['an extra query', 'http://127.0.0.1:9999/callback?x=1'],
        ['another host', 'https://evil.example.com/callback'],
      ];
      for (const [label, uri] of variants) {
        it(`refuses ${label} with an error page`, async () => {
          const res = await new Browser(server.url).request(start({ redirect_uri: uri }));
          assert.equal(res.status, 400);
          assert.equal(res.location, null);
          assert.match(res.headers.get('content-type') ?? '', /text\/html/);
        });
      }

      it('refuses an unknown client with an error page', async () => {
        const res = await new Browser(server.url).request(start({ client_id: 'mrd_ci_nope' }));
        assert.equal(res.status, 400);
        assert.equal(res.location, null);
      });

      it('redirects other errors to the registered URI (unsupported_response_type, invalid_scope)', async () => {
        const browser = new Browser(server.url);
        const type = await browser.request(start({ response_type: 'token' }));
        assert.equal(new URL(type.location!).searchParams.get('error'), 'unsupported_response_type');
        const scope = await browser.request(start({ scope: 'system:admin' }));
        assert.equal(new URL(scope.location!).searchParams.get('error'), 'invalid_scope');
        assert.equal(new URL(scope.location!).searchParams.get('iss'), server.url);
      });

      it('refuses a token request whose redirect_uri differs from the authorization request', async () => {
        const { code, pkce } = await codeWithoutExchange();
        const res = await exchange(code, pkce.verifier, client, {
          redirect_uri: 'http://127.0.0.1:9999/other',
        });
        assert.equal(res.body.error, 'invalid_grant');
      });

      // RFC 6749 §4.1.3: redirect_uri is REQUIRED in the token request when the authorization request
      // included it.
      const exchangeWithoutRedirectUri = (code: string, verifier: string) =>
        postForm(server, TOKEN, {
          grant_type: 'authorization_code',
          code,
          code_verifier: verifier,
          client_id: client.clientId,
          client_secret: client.clientSecret!,
        });

      it('requires redirect_uri at the token endpoint when the authorization request carried one', async () => {
        const { code, pkce } = await codeWithoutExchange();
        const res = await exchangeWithoutRedirectUri(code, pkce.verifier);
        assert.equal(res.status, 400);
        assert.equal(res.body.error, 'invalid_grant');
        assert.match(res.body.error_description, /redirect_uri/);
        assert.equal('access_token' in res.body, false);
      });

      it('accepts a token request without redirect_uri when the authorization request had none', async () => {
        const { code, pkce } = await codeWithoutExchange(client, { redirect_uri: undefined });
        const res = await exchangeWithoutRedirectUri(code, pkce.verifier);
        assert.equal(res.status, 200, JSON.stringify(res.body));
      });
    });

    async function codeWithoutExchange(
      c: RegisteredClient = client,
      extra: Record<string, string | undefined> = {},
    ) {
      const pkce = pkcePair();
      const location = await authorizeInBrowser(
        new Browser(server.url),
        start({ code_challenge: pkce.challenge, ...extra }, c),
        user,
      );
      return { code: new URL(location).searchParams.get('code')!, pkce };
    }

    describe('PKCE', () => {
      it('requires a code_challenge from a public client', async () => {
        const pub = await registerClient(server, {
          clientType: 'public',
          grantTypes: ['authorization_code'],
        });
        const res = await new Browser(server.url).request(
          start({ code_challenge: undefined, code_challenge_method: undefined }, pub),
        );
        assert.equal(new URL(res.location!).searchParams.get('error'), 'invalid_request');
      });

      it('refuses the plain method', async () => {
        const res = await new Browser(server.url).request(start({ code_challenge_method: 'plain' }));
        assert.equal(new URL(res.location!).searchParams.get('error'), 'invalid_request');
      });

      it('refuses a missing verifier', async () => {
        const { code } = await codeWithoutExchange();
        const res = await postForm(server, TOKEN, {
          grant_type: 'authorization_code',
          code,
          redirect_uri: REDIRECT_URI,
          client_id: client.clientId,
          client_secret: client.clientSecret!,
        });
        assert.equal(res.body.error, 'invalid_grant');
      });

      it('refuses a wrong verifier', async () => {
        const { code } = await codeWithoutExchange();
        const res = await exchange(code, pkcePair().verifier);
        assert.equal(res.body.error, 'invalid_grant');
      });

      it('lets a public client exchange with none + PKCE', async () => {
        const pub = await registerClient(server, {
          clientType: 'public',
          grantTypes: ['authorization_code', 'refresh_token'],
        });
        const { code, pkce } = await codeWithoutExchange(pub);
        const res = await exchange(code, pkce.verifier, pub);
        assert.equal(res.status, 200);
        assert.ok(res.body.refresh_token);
      });
    });

    describe('codes', () => {
      it('revokes the tokens of a replayed code', async () => {
        const { code, pkce } = await codeWithoutExchange(client, { scope: 'organizations:read' });
        const first = await exchange(code, pkce.verifier);
        assert.equal(first.status, 200);
        assert.equal((await api(first.body.access_token)).status, 200);
        const replay = await exchange(code, pkce.verifier);
        assert.equal(replay.body.error, 'invalid_grant');
        assert.equal((await api(first.body.access_token)).status, 401);
        assert.equal((await refresh(first.body.refresh_token)).body.error, 'invalid_grant');
      });

      it('refuses a code used by another client', async () => {
        const other = await registerClient(server);
        const { code, pkce } = await codeWithoutExchange();
        const res = await exchange(code, pkce.verifier, other);
        assert.equal(res.body.error, 'invalid_grant');
        assert.equal(
          (await exchange(code, pkce.verifier)).status,
          200,
          'the rightful client can still use it',
        );
      });

      it('refuses an expired code (60 s)', async () => {
        const { code, pkce } = await codeWithoutExchange();
        clock.offset = 61_000;
        try {
          assert.equal((await exchange(code, pkce.verifier)).body.error, 'invalid_grant');
        } finally {
          clock.offset = 0;
        }
      });
    });

    describe('refresh tokens', () => {
      it('rotates on every use; reuse of a rotated token revokes the grant', async () => {
        const { token } = await codeFlow(server, client, user, { scope: 'organizations:read uns:read' });
        const second = await refresh(token.body.refresh_token);
        assert.equal(second.status, 200);
        assert.notEqual(second.body.refresh_token, token.body.refresh_token);
        assert.equal((await api(second.body.access_token)).status, 200);
        const reuse = await refresh(token.body.refresh_token);
        assert.equal(reuse.body.error, 'invalid_grant');
        assert.equal((await api(second.body.access_token)).status, 401, 'the grant is revoked');
        assert.equal((await refresh(second.body.refresh_token)).body.error, 'invalid_grant');
      });

      it('may narrow the scope but not widen it', async () => {
        const { token } = await codeFlow(server, client, user, { scope: 'organizations:read uns:read' });
        const wider = await refresh(token.body.refresh_token, {
          scope: 'organizations:read uns:read tokens:read',
        });
        assert.equal(wider.body.error, 'invalid_scope');
        const narrower = await refresh(token.body.refresh_token, { scope: 'uns:read' });
        assert.equal(narrower.status, 200);
        assert.equal(narrower.body.scope, 'uns:read');
        const back = await refresh(narrower.body.refresh_token);
        assert.equal(back.body.scope, 'organizations:read uns:read', 'the grant keeps its scope');
      });

      it('refuses a refresh token of another client', async () => {
        const other = await registerClient(server);
        const { token } = await codeFlow(server, client, user);
        assert.equal((await refresh(token.body.refresh_token, {}, other)).body.error, 'invalid_grant');
      });
    });

    describe('disabled and deleted clients', () => {
      it('refuses every grant of a disabled client while its token keeps working', async () => {
        const c = await registerClient(server);
        const { token } = await codeFlow(server, c, user, { scope: 'organizations:read' });
        const { code, pkce } = await codeWithoutExchange(c);
        await server.admin.post(`/api/v1/oauth2/clients/${c.id}/disable`);
        for (const res of [
          await refresh(token.body.refresh_token, {}, c),
          await exchange(code, pkce.verifier, c),
        ]) {
          assert.equal(res.status, 401);
          assert.deepEqual(res.body, { error: 'invalid_client', error_description: 'client is disabled' });
        }
        const authz = await new Browser(server.url).request(start({}, c));
        assert.equal(new URL(authz.location!).searchParams.get('error'), 'unauthorized_client');
        assert.equal((await api(token.body.access_token)).status, 200);
      });

      it('stops the tokens, refresh tokens and consents of a deleted client at once', async () => {
        const c = await registerClient(server);
        const { token } = await codeFlow(server, c, user, { scope: 'organizations:read' });
        await server.admin.delete(`/api/v1/oauth2/clients/${c.id}`);
        assert.equal((await api(token.body.access_token)).status, 401);
        assert.equal((await refresh(token.body.refresh_token, {}, c)).status, 401);
        const consents = await server.storage.db
          .selectFrom('oauth2_consents')
          .selectAll()
          .where('client_pk', '=', c.id)
          .execute();
        assert.equal(consents.length, 0);
      });
    });

    describe('introspection, revocation, userinfo', () => {
      it('introspects access and refresh tokens and answers inactive once revoked', async () => {
        const { token } = await codeFlow(server, client, user, { scope: 'openid email' });
        const auth = { client_id: client.clientId, client_secret: client.clientSecret! };
        const at = await postForm(server, '/api/v1/oauth2/introspect', {
          token: token.body.access_token,
          ...auth,
        });
        assert.equal(at.body.active, true);
        assert.equal(at.body.sub, user.id);
        assert.equal(at.body.scope, 'openid email');
        const rt = await postForm(server, '/api/v1/oauth2/introspect', {
          token: token.body.refresh_token,
          ...auth,
        });
        assert.equal(rt.body.active, true);
        assert.equal(rt.body.token_type, 'refresh_token');
        await postForm(server, '/api/v1/oauth2/revoke', { token: token.body.refresh_token, ...auth });
        const after = await postForm(server, '/api/v1/oauth2/introspect', {
          token: token.body.access_token,
          ...auth,
        });
        assert.deepEqual(after.body, { active: false });
        assert.deepEqual(
          (await postForm(server, '/api/v1/oauth2/introspect', { token: 'garbage', ...auth })).body,
          { active: false },
        );
      });

      it('answers userinfo claims by scope', async () => {
        const { token } = await codeFlow(server, client, user, { scope: 'openid email' });
        const res = await fetch(`${server.url}/api/v1/oauth2/userinfo`, {
          headers: { authorization: `Bearer ${token.body.access_token}` },
        });
        const body = (await res.json()) as Record<string, unknown>;
        assert.deepEqual(Object.keys(body).sort(), ['email', 'email_verified', 'sub']);
        assert.equal(body.email, user.email);
        const none = await fetch(`${server.url}/api/v1/oauth2/userinfo`);
        assert.equal(none.status, 401);
        assert.match(none.headers.get('www-authenticate') ?? '', /Bearer/);
      });
    });
  });
}
