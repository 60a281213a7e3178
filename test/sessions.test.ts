import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { testDialects } from './helpers/dialects.js';
import { buildUser } from './helpers/factories.js';
import { ADMIN_EMAIL, ADMIN_PASSWORD, startTestServer, type TestServer } from './helpers/test-server.js';

for (const dialect of testDialects()) {
  describe(`console sessions [${dialect}]`, () => {
    let server: TestServer;
    let now = Date.now();
    before(async () => {
      server = await startTestServer(dialect, {
        clock: { now: () => now },
        config: { loginMaxFailures: 3, loginWindow: 600, sessionTtl: 3600 },
      });
    });
    after(() => server?.close());

    it('sets an HttpOnly, SameSite session cookie and returns the CSRF token and organizations', async () => {
      const res = await fetch(`${server.url}/api/v1/auth/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ email: ADMIN_EMAIL, password: ADMIN_PASSWORD }),
      });
      assert.equal(res.status, 200);
      const cookie = res.headers.get('set-cookie') ?? '';
      assert.match(cookie, /^meridian_session=mrd_ses_/);
      assert.match(cookie, /HttpOnly/i);
      assert.match(cookie, /SameSite=Lax/i);
      assert.equal(res.headers.get('cache-control'), 'no-store');
      const body = (await res.json()) as any;
      assert.equal(typeof body.data.csrfToken, 'string');
      assert.equal(body.data.organizations[0].id, server.orgId);
      assert.equal(body.data.user.isSystemAdmin, true);
    });

    it('answers a wrong password and an unknown email alike', async () => {
      const wrong = await server.client.post('/api/v1/auth/login', {
        email: ADMIN_EMAIL,
        password: 'nope-nope-nope',
      });
      const unknown = await server.client.post('/api/v1/auth/login', {
        email: 'ghost@example.com',
        password: 'nope-nope-nope',
      });
      assert.equal(wrong.status, 401);
      assert.deepEqual(wrong.body, unknown.body);
    });

    it('rate limits failed sign-ins per account with 429 and Retry-After, even for the right password', async () => {
      const user = await buildUser(server);
      for (let i = 0; i < 3; i++) {
        assert.equal(
          (await server.client.post('/api/v1/auth/login', { email: user.email, password: 'wrong-password!' }))
            .status,
          401,
        );
      }
      const limited = await server.client.post('/api/v1/auth/login', {
        email: user.email,
        password: user.password,
      });
      assert.equal(limited.status, 429);
      assert.equal(limited.body.error, 'rate_limited');
      assert.ok(Number(limited.headers.get('retry-after')) > 0);
      now += 601_000;
      assert.equal(
        (await server.client.post('/api/v1/auth/login', { email: user.email, password: user.password }))
          .status,
        200,
      );
    });

    it('expires a session after its lifetime', async () => {
      const client = await server.client.login(ADMIN_EMAIL, ADMIN_PASSWORD, server.orgId);
      assert.equal((await client.get('/api/v1/auth/session')).status, 200);
      now += 3601_000;
      assert.equal((await client.get('/api/v1/auth/session')).status, 401);
    });

    it('describes the session to its holder', async () => {
      const client = await server.client.login(ADMIN_EMAIL, ADMIN_PASSWORD, server.orgId);
      const res = await client.get('/api/v1/auth/session');
      assert.equal(res.status, 200);
      assert.equal(res.body.data.user.email, ADMIN_EMAIL);
      assert.ok(Date.parse(res.body.data.expiresAt) > now);
    });
  });
}
