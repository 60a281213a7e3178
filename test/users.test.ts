import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { testDialects } from './helpers/dialects.js';
import { buildUser, signedInMember } from './helpers/factories.js';
import { startTestServer, type TestServer } from './helpers/test-server.js';

for (const dialect of testDialects()) {
  describe(`user management [${dialect}]`, () => {
    let server: TestServer;
    before(async () => {
      server = await startTestServer(dialect);
    });
    after(() => server?.close());

    it('creates a user and never returns the password or its hash', async () => {
      const res = await server.admin.post('/api/v1/admin/users', {
        email: 'Ada@Example.com',
        displayName: 'Ada',
        password: 'analytical-engine',
      });
      assert.equal(res.status, 201);
      assert.equal(res.body.data.email, 'Ada@Example.com');
      assert.equal(res.body.data.status, 'active');
      assert.equal(res.body.data.createdBy, server.adminId);
      assert.doesNotMatch(res.text, /analytical-engine|argon2/);
    });

    it('refuses a password shorter than 12 characters, naming the field', async () => {
      const res = await server.admin.post('/api/v1/admin/users', {
        email: 'short@example.com',
        displayName: 'S',
        password: 'short',
      });
      assert.equal(res.status, 400);
      assert.match(res.body.message, /^password /);
    });

    it('refuses blank, trivial and common passwords and the own e-mail with a clear 400, creating nothing', async () => {
      const email = 'grace.hopper@example.com';
      for (const [password, pattern] of [
        [' '.repeat(12), /only spaces/],
        ['zzzzzzzzzzzz', /one character repeated/],
        ['123456789012', /run of consecutive/],
        ['Password1234!', /too common/],
        ['qwertyuiop12', /too common/],
        [email, /e-mail address/],
      ] as const) {
        const res = await server.admin.post('/api/v1/admin/users', { email, displayName: 'G', password });
        assert.equal(res.status, 400, password);
        assert.equal(res.body.error, 'bad_request');
        assert.match(res.body.message, pattern, password);
      }
      const listed = await server.admin.get('/api/v1/admin/users?search=grace.hopper');
      assert.equal(listed.body.data.length, 0);
      const { user, client } = await signedInMember(server, 'Viewer');
      const changed = await server.admin.patch(`/api/v1/admin/users/${user.id}`, {
        password: 'letmein12345',
      });
      assert.equal(changed.status, 400);
      assert.match(changed.body.message, /too common/);
      assert.equal(
        (await client.get('/api/v1/organizations')).status,
        200,
        'nothing changed: still signed in',
      );
      await server.client.login(user.email, user.password);
    });

    it("refuses keyboard walks, repeated words and passwords made of the user's e-mail or name with zxcvbn's reason, creating nothing; accepts a passphrase", async () => {
      const email = 'katherine.johnson@example.com';
      for (const [password, pattern] of [
        [
          'qwertyuiopas',
          /^password is too easy to guess \(strength 1 of 4, at least 3 needed\): This is similar to a commonly used password\./,
        ],
        ["asdfghjkl;'zx", /Straight rows of keys on your keyboard are easy to guess/],
        ['plantplantplant', /Repeated character patterns like "abcabcabc" are easy to guess/],
        [
          'johnson.katherine@example',
          /made mostly of your e-mail address or name: There should not be any personal/,
        ],
        ['KatherineJohnson1918', /must not be your e-mail address/],
      ] as const) {
        const res = await server.admin.post('/api/v1/admin/users', {
          email,
          displayName: 'Katherine Johnson',
          password,
        });
        assert.equal(res.status, 400, password);
        assert.equal(res.body.error, 'bad_request');
        assert.match(res.body.message, pattern, password);
      }
      assert.equal((await server.admin.get('/api/v1/admin/users?search=katherine')).body.data.length, 0);
      const created = await server.admin.post('/api/v1/admin/users', {
        email,
        displayName: 'Katherine Johnson',
        password: 'orbital trajectory by hand',
      });
      assert.equal(created.status, 201, created.text);
      // An administrator's reset of the password is judged with the user's own e-mail and name.
      const reset = await server.admin.patch(`/api/v1/admin/users/${created.body.data.id}`, {
        password: 'KatherineJohnson-1918',
      });
      assert.equal(reset.status, 400);
      assert.match(reset.body.message, /made mostly of your e-mail address or name|must not be your/);
      const walk = await server.admin.patch(`/api/v1/admin/users/${created.body.data.id}`, {
        password: 'zxcvbnmasdfghjkl',
      });
      assert.equal(walk.status, 400);
      assert.match(walk.body.message, /too easy to guess/);
      await server.client.login(email, 'orbital trajectory by hand');
    });

    it('refuses an invalid email, naming the field', async () => {
      const res = await server.admin.post('/api/v1/admin/users', {
        email: 'not-an-email',
        displayName: 'S',
        password: 'long-enough-password',
      });
      assert.equal(res.status, 400);
      assert.match(res.body.message, /^email /);
    });

    it('searches by email or name, case-insensitively', async () => {
      await server.admin.post('/api/v1/admin/users', {
        email: 'grace@navy.example',
        displayName: 'Grace Hopper',
        password: 'cobol-compiler-1',
      });
      const byName = await server.admin.get('/api/v1/admin/users?search=HOPPER');
      assert.deepEqual(
        byName.body.data.map((u: { email: string }) => u.email),
        ['grace@navy.example'],
      );
      const byEmail = await server.admin.get('/api/v1/admin/users?search=navy.exa');
      assert.equal(byEmail.body.pagination.total, 1);
    });

    it('treats LIKE metacharacters in a search literally', async () => {
      const res = await server.admin.get('/api/v1/admin/users?search=%25');
      assert.equal(res.status, 200);
      assert.equal(res.body.pagination.total, 0);
    });

    it('sorts and pages without repeating or skipping rows', async () => {
      for (let i = 0; i < 5; i++) await buildUser(server, { email: `page${i}@sort.example` });
      const seen: string[] = [];
      for (let offset = 0; offset < 5; offset += 2) {
        const page = await server.admin.get(
          `/api/v1/admin/users?search=sort.example&sort=email&order=desc&limit=2&offset=${offset}`,
        );
        assert.equal(page.body.pagination.total, 5);
        seen.push(...page.body.data.map((u: { email: string }) => u.email));
      }
      assert.deepEqual(seen, [
        'page4@sort.example',
        'page3@sort.example',
        'page2@sort.example',
        'page1@sort.example',
        'page0@sort.example',
      ]);
    });

    it('updates the display name and records who changed it', async () => {
      const user = await buildUser(server);
      const res = await server.admin.patch(`/api/v1/admin/users/${user.id}`, { displayName: 'Renamed' });
      assert.equal(res.status, 200);
      assert.equal(res.body.data.displayName, 'Renamed');
      assert.equal(res.body.data.updatedBy, server.adminId);
    });

    it('refuses an update to an email another user has', async () => {
      const a = await buildUser(server);
      const b = await buildUser(server);
      const res = await server.admin.patch(`/api/v1/admin/users/${a.id}`, { email: b.email.toUpperCase() });
      assert.equal(res.status, 409);
    });

    it('deactivating a user ends their session at once and stops their sign-in', async () => {
      const { user, client } = await signedInMember(server, 'Editor');
      assert.equal((await client.get('/api/v1/organizations')).status, 200);
      const res = await server.admin.put(`/api/v1/admin/users/${user.id}/status`, { status: 'deactivated' });
      assert.equal(res.status, 200);
      assert.equal(res.body.data.status, 'deactivated');
      assert.equal((await client.get('/api/v1/organizations')).status, 401);
      await assert.rejects(server.client.login(user.email, user.password), /401/);
      await server.admin.put(`/api/v1/admin/users/${user.id}/status`, { status: 'active' });
      assert.equal((await server.client.login(user.email, user.password)).constructor.name, 'TestClient');
    });

    it('deletes a user softly, hides them from the default list, and restores them', async () => {
      const user = await buildUser(server);
      assert.equal((await server.admin.delete(`/api/v1/admin/users/${user.id}`)).status, 204);
      const listed = await server.admin.get(`/api/v1/admin/users?search=${encodeURIComponent(user.email)}`);
      assert.equal(listed.body.pagination.total, 0);
      const deleted = await server.admin.get(
        `/api/v1/admin/users?status=deleted&search=${encodeURIComponent(user.email)}`,
      );
      assert.equal(deleted.body.data[0].deleted, true);
      await assert.rejects(server.client.login(user.email, user.password), /401/);
      const restored = await server.admin.post(`/api/v1/admin/users/${user.id}/restore`);
      assert.equal(restored.status, 200);
      assert.equal(restored.body.data.deleted, false);
      await server.client.login(user.email, user.password);
    });

    it('refuses to restore a user that is not deleted', async () => {
      const user = await buildUser(server);
      assert.equal((await server.admin.post(`/api/v1/admin/users/${user.id}/restore`)).status, 409);
    });

    it('never deactivates, demotes or deletes the last active System Administrator', async () => {
      const status = await server.admin.put(`/api/v1/admin/users/${server.adminId}/status`, {
        status: 'deactivated',
      });
      assert.equal(status.status, 409);
      const demote = await server.admin.patch(`/api/v1/admin/users/${server.adminId}`, {
        isSystemAdmin: false,
      });
      assert.equal(demote.status, 409);
      assert.equal((await server.admin.delete(`/api/v1/admin/users/${server.adminId}`)).status, 409);
    });

    it("a password change ends the user's sessions", async () => {
      const { user, client } = await signedInMember(server, 'Viewer');
      await server.admin.patch(`/api/v1/admin/users/${user.id}`, { password: 'a-brand-new-password' });
      assert.equal((await client.get('/api/v1/organizations')).status, 401);
      await server.client.login(user.email, 'a-brand-new-password');
    });

    it('an organization Owner who is not a System Administrator cannot manage users', async () => {
      const { client } = await signedInMember(server, 'Owner');
      const res = await client.get('/api/v1/admin/users');
      assert.equal(res.status, 403);
      assert.equal(res.body.error, 'insufficient_scope');
    });
  });
}
