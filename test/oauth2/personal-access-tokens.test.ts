import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { testDialects } from '../helpers/dialects.js';
import { signedInMember } from '../helpers/factories.js';
import type { TestClient } from '../helpers/http-client.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';
import { postForm, registerClient } from './oauth2-helpers.js';

const BASE = '/api/v1/oauth2/tokens';
const DAY = 86_400_000;

for (const dialect of testDialects()) {
  describe(`personal access tokens [${dialect}]`, () => {
    let server: TestServer;
    let member: { user: { id: string }; client: TestClient };
    const clock = { offset: 0, now: () => Date.now() + clock.offset };

    before(async () => {
      server = await startTestServer(dialect, { clock });
      member = await signedInMember(server, 'Admin');
    });
    after(() => server?.close());

    const create = (body: Record<string, unknown>, as: TestClient = member.client) =>
      as.post(BASE, { name: 'ci', scopes: ['organizations:read', 'tokens:read'], ...body });
    const orgs = (token: string) => server.client.get('/api/v1/organizations', { token, org: server.orgId });

    it('creates a token shown once, with a 90-day default expiry, usable on an API route', async () => {
      const res = await create({});
      assert.equal(res.status, 201);
      const pat = res.body.data;
      assert.match(pat.token, /^mrd_pat_[A-Za-z0-9]{46}$/);
      assert.equal(pat.status, 'active');
      assert.equal(Date.parse(pat.expiresAt) - Date.parse(pat.createdAt), 90 * DAY);
      assert.equal((await orgs(pat.token)).status, 200);
      const list = await member.client.get(BASE);
      const row = list.body.data.find((t: { id: string }) => t.id === pat.id);
      assert.equal('token' in row, false);
      assert.ok(row.lastUsedAt, 'last used time is recorded');
      assert.equal(JSON.stringify(list.body).includes(pat.token), false);
    });

    it('offers 30, 90, 180 and 365 days only', async () => {
      for (const days of [30, 180, 365]) {
        const res = await create({ expiresInDays: days });
        assert.equal(Date.parse(res.body.data.expiresAt) - Date.parse(res.body.data.createdAt), days * DAY);
      }
      const bad = await create({ expiresInDays: 7 });
      assert.equal(bad.status, 400);
      assert.match(bad.body.message, /expiresInDays/);
    });

    it('refuses a name outside 1 to 255 characters', async () => {
      assert.equal((await create({ name: '' })).status, 400);
      assert.equal((await create({ name: 'x'.repeat(256) })).status, 400);
      assert.equal((await create({ name: 'x'.repeat(255) })).status, 201);
    });

    it('refuses to create a PAT with an OAuth2 access token, even one carrying tokens:write', async () => {
      const app = await registerClient(server, {
        grantTypes: ['client_credentials'],
        redirectUris: [],
        allowedScopes: ['tokens:read', 'tokens:write', 'organizations:read'],
        actingUserId: member.user.id,
      });
      const issued = await postForm(server, '/api/v1/oauth2/token', {
        grant_type: 'client_credentials',
        client_id: app.clientId,
        client_secret: app.clientSecret!,
      });
      assert.equal(issued.status, 200);
      assert.match(issued.body.scope, /tokens:write/);
      const delegated = server.client.as({ token: issued.body.access_token, org: server.orgId });
      const before = (await member.client.get(`${BASE}?limit=100`)).body.pagination.total;
      const res = await create({ expiresInDays: 365 }, delegated);
      assert.equal(res.status, 403);
      assert.match(res.body.message, /console session or a personal access token/);
      assert.equal((await member.client.get(`${BASE}?limit=100`)).body.pagination.total, before);
    });

    it('from a PAT: every scope, custom ones too, must be one that PAT carries', async () => {
      const parent = (await create({ scopes: ['tokens:write', 'organizations:read', 'plant.reports'] })).body
        .data.token as string;
      const viaPat = server.client.as({ token: parent, org: server.orgId });
      assert.equal((await create({ scopes: ['organizations:read', 'plant.reports'] }, viaPat)).status, 201);
      for (const scope of ['plant.other', 'uns:read', 'tokens:read']) {
        const res = await create({ scopes: [scope] }, viaPat);
        assert.equal(res.status, 400, scope);
        assert.match(res.body.message, new RegExp(`may not grant ${scope}`));
      }
      // From the console session, a well-formed custom scope is the user's to give.
      assert.equal((await create({ scopes: ['plant.other'] })).status, 201);
    });

    it("refuses scopes beyond the caller's", async () => {
      const res = await create({ scopes: ['organizations:write'] });
      assert.equal(res.status, 400);
      assert.match(res.body.message, /organizations:write/);
    });

    it('enforces the token scopes (403 insufficient_scope)', async () => {
      const pat = (await create({ scopes: ['tokens:read'] })).body.data.token;
      const res = await orgs(pat);
      assert.equal(res.status, 403);
      assert.equal(res.body.error, 'insufficient_scope');
    });

    it('revokes: 401 on the next request, listed as revoked', async () => {
      const pat = (await create({})).body.data;
      assert.equal((await orgs(pat.token)).status, 200);
      assert.equal((await member.client.delete(`${BASE}/${pat.id}`)).status, 204);
      assert.equal((await orgs(pat.token)).status, 401);
      const list = await member.client.get(`${BASE}?status=revoked`);
      assert.ok(
        list.body.data.some((t: { id: string; status: string }) => t.id === pat.id && t.status === 'revoked'),
      );
    });

    it("cannot revoke another user's token", async () => {
      const other = await signedInMember(server, 'Viewer');
      const pat = (await create({ scopes: ['tokens:read'] }, other.client)).body.data;
      assert.equal((await member.client.delete(`${BASE}/${pat.id}`)).status, 404);
    });

    it('expires, listed as expired', async () => {
      const pat = (await create({ expiresInDays: 30 })).body.data;
      const lister = (await create({ expiresInDays: 365 })).body.data.token;
      clock.offset = 31 * DAY;
      try {
        assert.equal((await orgs(pat.token)).status, 401);
        const list = await server.client.get(`${BASE}?status=expired`, { token: lister, org: server.orgId });
        assert.ok(
          list.body.data.some(
            (t: { id: string; status: string }) => t.id === pat.id && t.status === 'expired',
          ),
        );
      } finally {
        clock.offset = 0;
      }
    });

    it('stops working when the user is deactivated', async () => {
      const m = await signedInMember(server, 'Viewer');
      const pat = (await create({ scopes: ['organizations:read'] }, m.client)).body.data.token;
      assert.equal((await orgs(pat)).status, 200);
      await server.admin.put(`/api/v1/admin/users/${m.user.id}/status`, { status: 'deactivated' });
      assert.equal((await orgs(pat)).status, 401);
    });

    it('follows a lowered role on the next request (403)', async () => {
      const m = await signedInMember(server, 'Admin');
      const pat = (await create({ scopes: ['users:read'] }, m.client)).body.data.token;
      const users = () =>
        server.client.get(`/api/v1/organizations/${server.orgId}/members`, { token: pat, org: server.orgId });
      const before = await users();
      await server.admin.put(`/api/v1/organizations/${server.orgId}/members/${m.user.id}`, {
        role: 'Viewer',
      });
      const afterLowering = await users();
      assert.equal(before.status, 200);
      assert.equal(afterLowering.status, 403);
    });

    it('lists with search, sort and paging', async () => {
      const m = await signedInMember(server, 'Viewer');
      for (const name of ['b-token', 'a-token', 'c-other'])
        await create({ name, scopes: ['tokens:read'] }, m.client);
      const res = await m.client.get(`${BASE}?search=token&sort=name&order=asc&limit=1`);
      assert.deepEqual(
        res.body.data.map((t: { name: string }) => t.name),
        ['a-token'],
      );
      assert.equal(res.body.pagination.total, 2);
      for (const key of ['name', 'scopes', 'createdAt', 'lastUsedAt', 'expiresAt', 'status'])
        assert.ok(key in res.body.data[0]);
    });

    it('is introspectable by a confidential client', async () => {
      const pat = (await create({})).body.data.token;
      const c = await registerClient(server);
      const res = await postForm(server, '/api/v1/oauth2/introspect', {
        token: pat,
        client_id: c.clientId,
        client_secret: c.clientSecret!,
      });
      assert.equal(res.body.active, true);
      assert.equal(res.body.sub, member.user.id);
      assert.equal(res.body.token_type, 'personal_access_token');
    });
  });
}
