import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { testDialects } from '../helpers/dialects.js';
import { signedInMember } from '../helpers/factories.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';
import { clientCredentials, REDIRECT_URI, registerClient } from './oauth2-helpers.js';

const BASE = '/api/v1/oauth2/clients';

for (const dialect of testDialects()) {
  describe(`OAuth2 client management [${dialect}]`, () => {
    let server: TestServer;
    before(async () => {
      server = await startTestServer(dialect);
    });
    after(() => server?.close());

    describe('register', () => {
      it('returns 201 with every field, an active status and the secret once', async () => {
        const res = await server.admin.post(BASE, {
          name: '  Line dashboard ',
          description: 'Shows the line',
          clientType: 'confidential',
          grantTypes: ['authorization_code'],
          redirectUris: [REDIRECT_URI],
          allowedScopes: ['openid', 'uns:read'],
        });
        assert.equal(res.status, 201);
        const c = res.body.data;
        assert.equal(c.name, 'Line dashboard');
        assert.equal(c.status, 'active');
        assert.deepEqual(c.grantTypes, ['authorization_code', 'refresh_token']);
        assert.deepEqual(c.responseTypes, ['code']);
        assert.match(c.clientId, /^mrd_ci_/);
        assert.match(c.clientSecret, /^mrd_cs_/);
        assert.equal(c.createdBy, server.adminId);
        assert.equal(c.updatedBy, server.adminId);
        assert.equal(res.headers.get('cache-control'), 'no-store');
        const view = await server.admin.get(`${BASE}/${c.id}`);
        assert.equal(view.status, 200);
        assert.equal('clientSecret' in view.body.data, false);
        assert.equal(JSON.stringify(view.body).includes(c.clientSecret), false);
      });

      it('gives a public client no secret', async () => {
        const c = await registerClient(server, { clientType: 'public', grantTypes: ['authorization_code'] });
        assert.equal(c.clientSecret, undefined);
      });

      const refusals: [string, Record<string, unknown>, RegExp][] = [
        ['an empty name', { name: '' }, /name/],
        ['a name of 101 characters', { name: 'x'.repeat(101) }, /name/],
        ['a description of 501 characters', { description: 'd'.repeat(501) }, /description/],
        [
          'client credentials on a public client',
          { clientType: 'public', grantTypes: ['client_credentials'] },
          /grantTypes/,
        ],
        ['authorization code without redirect URIs', { redirectUris: [] }, /redirectUris/],
        [
          'an http redirect URI that is not loopback',
          { redirectUris: ['http://example.com/cb'] },
          /redirectUris/,
        ],
        ['a redirect URI with a fragment', { redirectUris: ['https://example.com/cb#x'] }, /redirectUris/],
        ['an unknown grant type', { grantTypes: ['password'] }, /grantTypes/],
        ['responseTypes given', { responseTypes: ['code'] }, /responseTypes/],
        ['no allowed scopes', { allowedScopes: [] }, /allowedScopes/],
        [
          'an acting user that does not exist',
          {
            grantTypes: ['client_credentials'],
            redirectUris: [],
            actingUserId: '00000000-0000-4000-8000-000000000000',
          },
          /actingUserId/,
        ],
        [
          'an acting user without client credentials',
          { grantTypes: ['authorization_code'], actingUserId: 'x' },
          /actingUserId/,
        ],
      ];
      for (const [label, fields, field] of refusals) {
        it(`refuses ${label} with 400 naming the field`, async () => {
          const res = await server.admin.post(BASE, {
            name: 'App',
            clientType: 'confidential',
            grantTypes: ['authorization_code', 'client_credentials'],
            redirectUris: [REDIRECT_URI],
            allowedScopes: ['openid'],
            ...fields,
          });
          assert.equal(res.status, 400);
          assert.equal(res.body.error, 'bad_request');
          assert.match(res.body.message, field);
        });
      }

      it('accepts https and loopback http redirect URIs', async () => {
        const c = await registerClient(server, {
          redirectUris: ['https://app.example.com/cb', 'http://localhost:3000/cb', 'http://[::1]:8000/cb'],
        });
        assert.equal(c.redirectUris.length, 3);
      });

      it('accepts an existing acting user', async () => {
        const { user } = await signedInMember(server, 'Viewer');
        const c = await registerClient(server, {
          grantTypes: ['client_credentials'],
          redirectUris: [],
          actingUserId: user.id,
        });
        assert.equal((c as unknown as { actingUserId: string }).actingUserId, user.id);
      });
    });

    describe('edit', () => {
      it('changes the editable fields and the updated-at', async () => {
        const c = await registerClient(server);
        const res = await server.admin.patch(`${BASE}/${c.id}`, {
          name: 'Renamed',
          description: 'New',
          redirectUris: ['https://new.example.com/cb'],
          allowedScopes: ['openid'],
        });
        assert.equal(res.status, 200);
        assert.equal(res.body.data.name, 'Renamed');
        assert.deepEqual(res.body.data.redirectUris, ['https://new.example.com/cb']);
        assert.deepEqual(res.body.data.allowedScopes, ['openid']);
      });

      for (const [field, value] of [
        ['clientType', 'public'],
        ['grantTypes', ['client_credentials']],
        ['responseTypes', []],
        ['clientId', 'mrd_ci_x'],
        ['status', 'disabled'],
      ] as const) {
        it(`refuses to change ${field} with 400 naming it`, async () => {
          const c = await registerClient(server);
          const res = await server.admin.patch(`${BASE}/${c.id}`, { [field]: value });
          assert.equal(res.status, 400);
          assert.match(res.body.message, new RegExp(field));
        });
      }

      it('answers 404 for an unknown client', async () => {
        const res = await server.admin.patch(`${BASE}/00000000-0000-4000-8000-000000000000`, { name: 'x' });
        assert.equal(res.status, 404);
      });
    });

    describe('enable, disable, delete', () => {
      it('disables: new tokens are refused while an issued one keeps working; enable restores', async () => {
        const c = await registerClient(server);
        const issued = await clientCredentials(server, c, 'organizations:read');
        assert.equal(issued.status, 200);
        const disabled = await server.admin.post(`${BASE}/${c.id}/disable`);
        assert.equal(disabled.body.data.status, 'disabled');
        const refused = await clientCredentials(server, c);
        assert.equal(refused.status, 401);
        assert.deepEqual(refused.body, { error: 'invalid_client', error_description: 'client is disabled' });
        const api = await server.client.get('/api/v1/organizations', {
          token: issued.body.access_token,
          org: server.orgId,
        });
        assert.equal(api.status, 200);
        await server.admin.post(`${BASE}/${c.id}/enable`);
        assert.equal((await clientCredentials(server, c)).status, 200);
      });

      it('applies an edit of the allowed scopes to the very next token request', async () => {
        const c = await registerClient(server);
        assert.equal((await clientCredentials(server, c, 'organizations:read')).status, 200);
        const edited = await server.admin.patch(`${BASE}/${c.id}`, { allowedScopes: ['uns:read'] });
        assert.equal(edited.status, 200);
        const refused = await clientCredentials(server, c, 'organizations:read');
        assert.equal(refused.status, 400);
        assert.equal(refused.body.error, 'invalid_scope');
        assert.equal((await clientCredentials(server, c)).body.scope, 'uns:read');
      });

      it('deletes: the client is gone and its tokens are refused at once', async () => {
        const c = await registerClient(server);
        const issued = await clientCredentials(server, c, 'organizations:read');
        const token = issued.body.access_token;
        assert.equal(
          (await server.client.get('/api/v1/organizations', { token, org: server.orgId })).status,
          200,
        );
        assert.equal((await server.admin.delete(`${BASE}/${c.id}`)).status, 204);
        assert.equal((await server.admin.get(`${BASE}/${c.id}`)).status, 404);
        assert.equal(
          (await server.client.get('/api/v1/organizations', { token, org: server.orgId })).status,
          401,
        );
        assert.equal((await clientCredentials(server, c)).status, 401);
      });
    });

    describe('list', () => {
      let tag: string;
      before(async () => {
        tag = `L${Date.now()}`;
        await registerClient(server, { name: `${tag} alpha`, description: 'first' });
        const b = await registerClient(server, { name: `${tag} beta`, description: 'needle here' });
        await registerClient(server, { name: `${tag} gamma` });
        await server.admin.post(`${BASE}/${b.id}/disable`);
      });

      it('carries every field of a list row', async () => {
        const res = await server.admin.get(`${BASE}?search=${tag}`);
        assert.equal(res.status, 200);
        const row = res.body.data[0];
        for (const key of [
          'name',
          'description',
          'clientType',
          'clientId',
          'grantTypes',
          'allowedScopes',
          'status',
          'createdBy',
          'createdAt',
          'updatedBy',
          'updatedAt',
        ]) {
          assert.ok(key in row, key);
        }
        assert.equal('clientSecret' in row, false);
      });

      it('filters by status', async () => {
        const disabled = await server.admin.get(`${BASE}?search=${tag}&status=disabled`);
        assert.deepEqual(
          disabled.body.data.map((c: { name: string }) => c.name),
          [`${tag} beta`],
        );
        const active = await server.admin.get(`${BASE}?search=${tag}&status=active`);
        assert.equal(active.body.pagination.total, 2);
        const all = await server.admin.get(`${BASE}?search=${tag}&status=all`);
        assert.equal(all.body.pagination.total, 3);
      });

      it('searches name, description and client ID', async () => {
        const byDescription = await server.admin.get(`${BASE}?search=NEEDLE`);
        assert.deepEqual(
          byDescription.body.data.map((c: { name: string }) => c.name),
          [`${tag} beta`],
        );
        const one = byDescription.body.data[0];
        const byClientId = await server.admin.get(`${BASE}?search=${one.clientId}`);
        assert.equal(byClientId.body.data[0].id, one.id);
      });

      it('sorts by name and pages', async () => {
        const asc = await server.admin.get(`${BASE}?search=${tag}&sort=name&order=asc&limit=2`);
        assert.deepEqual(
          asc.body.data.map((c: { name: string }) => c.name),
          [`${tag} alpha`, `${tag} beta`],
        );
        assert.equal(asc.body.pagination.total, 3);
        const page2 = await server.admin.get(`${BASE}?search=${tag}&sort=name&order=asc&limit=2&offset=2`);
        assert.deepEqual(
          page2.body.data.map((c: { name: string }) => c.name),
          [`${tag} gamma`],
        );
        const desc = await server.admin.get(`${BASE}?search=${tag}&sort=name&order=desc&limit=1`);
        assert.equal(desc.body.data[0].name, `${tag} gamma`);
      });

      it('sorts by createdAt and updatedAt', async () => {
        const created = await server.admin.get(`${BASE}?search=${tag}&sort=createdAt&order=asc`);
        assert.equal(created.body.data[0].name, `${tag} alpha`);
        const updated = await server.admin.get(`${BASE}?search=${tag}&sort=updatedAt&order=desc`);
        assert.equal(updated.body.data[0].name, `${tag} beta`);
      });
    });

    describe('access', () => {
      it('answers 403 to an organization Owner who is not a System Administrator', async () => {
        const { client } = await signedInMember(server, 'Owner');
        assert.equal((await client.get(BASE)).status, 403);
        assert.equal((await client.post(BASE, { name: 'x' })).status, 403);
      });

      it('answers 401 without a credential', async () => {
        assert.equal((await server.client.get(BASE, { org: server.orgId })).status, 401);
      });
    });
  });
}
