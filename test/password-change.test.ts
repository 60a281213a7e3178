import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { testDialects } from './helpers/dialects.js';
import { buildUser } from './helpers/factories.js';
import { startTestServer, type TestServer } from './helpers/test-server.js';
import { createPat } from './uns/uns-helpers.js';

const PASSWORD = '/api/v1/auth/password';
const NEW_PASSWORD = 'copper-kettle-harbour-lantern';

// Issue 40 point 3: a user looks after their own password, and a lockout says how long and ends at a reset.
for (const dialect of testDialects()) {
  describe(`own password change and sign-in lockout [${dialect}]`, () => {
    let server: TestServer;

    before(async () => {
      server = await startTestServer(dialect);
    });
    after(() => server?.close());

    const passwordOf = async (id: string) =>
      (
        await server.storage.db
          .selectFrom('users')
          .select('password_hash')
          .where('id', '=', id)
          .executeTakeFirstOrThrow()
      ).password_hash;

    it('changes the password from a session: other sessions end, this one stays, audited', async () => {
      const user = await buildUser(server);
      const here = await server.client.login(user.email, user.password);
      const elsewhere = await server.client.login(user.email, user.password);
      const res = await here.post(PASSWORD, { currentPassword: user.password, newPassword: NEW_PASSWORD });
      assert.equal(res.status, 204, res.text);
      assert.equal((await here.get('/api/v1/auth/session')).status, 200);
      assert.equal((await elsewhere.get('/api/v1/auth/session')).status, 401);
      await assert.rejects(server.client.login(user.email, user.password), /401/);
      await server.client.login(user.email, NEW_PASSWORD);
      const audit = await server.storage.db
        .selectFrom('audit_log')
        .select(['action', 'actor_user_id', 'details'])
        .where('target_id', '=', user.id)
        .where('action', '=', 'user.password_changed')
        .execute();
      assert.equal(audit.length, 1);
      assert.equal(audit[0]!.actor_user_id, user.id);
      assert.doesNotMatch(audit[0]!.details ?? '', new RegExp(NEW_PASSWORD));
    });

    it('refuses a wrong current password (400 naming it) and a weak new one (400 naming the rule), changing nothing', async () => {
      const user = await buildUser(server);
      const session = await server.client.login(user.email, user.password);
      const before = await passwordOf(user.id);
      const wrong = await session.post(PASSWORD, {
        currentPassword: 'not-my-password',
        newPassword: NEW_PASSWORD,
      });
      assert.equal(wrong.status, 400);
      assert.deepEqual(wrong.body, {
        error: 'bad_request',
        message: 'currentPassword is incorrect',
      });
      const short = await session.post(PASSWORD, { currentPassword: user.password, newPassword: 'short' });
      assert.equal(short.status, 400);
      assert.equal(short.body.message, 'newPassword must be at least 12 characters');
      const common = await session.post(PASSWORD, {
        currentPassword: user.password,
        newPassword: 'password1234',
      });
      assert.equal(common.status, 400);
      assert.match(common.body.message, /^newPassword /);
      const missing = await session.post(PASSWORD, { currentPassword: user.password });
      assert.equal(missing.status, 400);
      assert.equal(missing.body.message, 'newPassword is required');
      assert.equal(await passwordOf(user.id), before);
    });

    it('needs a console session with its CSRF token: a token answers 403, a missing CSRF token 403', async () => {
      const user = await buildUser(server);
      const session = await server.client.login(user.email, user.password);
      const pat = await createPat(server.admin, ['users:write']);
      const withToken = await server.client.post(
        PASSWORD,
        { currentPassword: 'admin-password-for-tests', newPassword: NEW_PASSWORD },
        { token: pat, org: null },
      );
      assert.equal(withToken.status, 403, withToken.text);
      assert.equal(withToken.body.error, 'insufficient_scope');
      const cookieOnly = session.as({
        cookie: (session as unknown as { credential: { cookie: string } }).credential.cookie,
      });
      const noCsrf = await cookieOnly.post(PASSWORD, {
        currentPassword: user.password,
        newPassword: NEW_PASSWORD,
      });
      assert.equal(noCsrf.status, 403);
      assert.equal(noCsrf.body.error, 'csrf_rejected');
    });

    it('limits wrong current passwords as sign-in does (429 with Retry-After and how long)', async () => {
      const user = await buildUser(server);
      const session = await server.client.login(user.email, user.password);
      for (let i = 0; i < server.config.loginMaxFailures; i++)
        assert.equal(
          (await session.post(PASSWORD, { currentPassword: `wrong-${i}`, newPassword: NEW_PASSWORD })).status,
          400,
        );
      const limited = await session.post(PASSWORD, {
        currentPassword: user.password,
        newPassword: NEW_PASSWORD,
      });
      assert.equal(limited.status, 429);
      assert.ok(Number(limited.headers.get('retry-after')) > 0);
      assert.match(limited.body.message, /^too many wrong current passwords; try again in \d+ minutes$/);
    });

    it("a locked-out sign-in says how long; an administrator's reset lifts the lock", async () => {
      const user = await buildUser(server);
      for (let i = 0; i < server.config.loginMaxFailures; i++)
        await assert.rejects(server.client.login(user.email, `wrong-${i}`), /401/);
      const locked = await server.client.post('/api/v1/auth/login', {
        email: user.email,
        password: user.password,
      });
      assert.equal(locked.status, 429);
      const retryAfter = Number(locked.headers.get('retry-after'));
      assert.ok(retryAfter > 800 && retryAfter <= 900, String(retryAfter));
      assert.deepEqual(locked.body, {
        error: 'rate_limited',
        message: `too many failed sign-in attempts; try again in ${Math.ceil(retryAfter / 60)} minutes`,
      });
      const reset = await server.admin.patch(`/api/v1/admin/users/${user.id}`, { password: NEW_PASSWORD });
      assert.equal(reset.status, 200, reset.text);
      await server.client.login(user.email, NEW_PASSWORD);
    });

    it('a lock that followed a reset holds: failures after the change count again', async () => {
      const user = await buildUser(server);
      const reset = await server.admin.patch(`/api/v1/admin/users/${user.id}`, { password: NEW_PASSWORD });
      assert.equal(reset.status, 200, reset.text);
      for (let i = 0; i < server.config.loginMaxFailures; i++)
        await assert.rejects(server.client.login(user.email, `wrong-${i}`), /401/);
      const locked = await server.client.post('/api/v1/auth/login', {
        email: user.email,
        password: NEW_PASSWORD,
      });
      assert.equal(locked.status, 429);
    });

    // last: it locks the test client's address for the rest of the window
    it("an administrator's reset lifts the address's sign-in limit for that account only", async () => {
      const users = [];
      for (let i = 0; i < 10; i++) users.push(await buildUser(server));
      const signIn = (email: string, password: string) =>
        server.client.post('/api/v1/auth/login', { email, password });
      // ten accounts, each locked, lock their address too (ten times an account's limit; the tests
      // above counted some failures there already, so the last attempts may meet the lock: 429)
      for (const user of users)
        for (let i = 0; i < server.config.loginMaxFailures; i++)
          assert.ok([401, 429].includes((await signIn(user.email, `wrong-${i}`)).status));
      const bystander = await buildUser(server);
      const first = users[0]!;
      assert.equal((await signIn(bystander.email, bystander.password)).status, 429, 'the address is locked');

      const reset = await server.admin.patch(`/api/v1/admin/users/${first.id}`, { password: NEW_PASSWORD });
      assert.equal(reset.status, 200, reset.text);
      const lifted = await signIn(first.email, NEW_PASSWORD);
      assert.equal(lifted.status, 200, lifted.text);
      assert.equal((await signIn(first.email, NEW_PASSWORD)).status, 200, 'and stays lifted for it');

      assert.equal((await signIn(bystander.email, bystander.password)).status, 429, 'others stay locked');
      assert.equal((await signIn(users[1]!.email, users[1]!.password)).status, 429);
    });
  });
}
