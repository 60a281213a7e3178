import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { testDialects } from '../helpers/dialects.js';
import { addMember, buildOrganization, buildUser } from '../helpers/factories.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';
import {
  authorizeInBrowser,
  authorizeUrl,
  Browser,
  clientCredentials,
  codeFlow,
  pkcePair,
  postForm,
  REDIRECT_URI,
  registerClient,
} from './oauth2-helpers.js';

const TOPIC = 'v1/acme/plant1/press4/temperature';

/**
 * Issue 25, finding 3: an OAuth2 client acts only in the organizations it is bound to (default: the one it
 * was registered in), for every grant and at every use of its tokens, including organizations created
 * after it; within them its user's own memberships and role still apply.
 */
for (const dialect of testDialects()) {
  describe(`OAuth2 clients bound to organizations [${dialect}]`, () => {
    let server: TestServer;
    let otherOrg: string;
    before(async () => {
      server = await startTestServer(dialect);
      otherOrg = await buildOrganization(server, 'Other plant');
    });
    after(() => server?.close());

    const publish = (token: string, org: string) =>
      server.client.post('/api/v1/uns/data/publish', { topic: TOPIC, value: 1 }, { token, org });
    const latest = (token: string, org: string) =>
      server.client.get(`/api/v1/uns/data/latest?topic=${TOPIC}`, { token, org });

    it('binds a client to the organization it was registered in, shown in the list and the view', async () => {
      const client = await registerClient(server, { grantTypes: ['client_credentials'], redirectUris: [] });
      const viewed = await server.admin.get(`/api/v1/oauth2/clients/${client.id}`);
      assert.deepEqual(viewed.body.data.organizationIds, [server.orgId]);
      const listed = await server.admin.get('/api/v1/oauth2/clients?limit=100');
      const row = listed.body.data.find((c: { id: string }) => c.id === client.id);
      assert.deepEqual(row.organizationIds, [server.orgId]);
    });

    it("a System Administrator's gateway client reads and publishes in its organization only, not in one created before or after it", async () => {
      const gateway = await registerClient(server, {
        grantTypes: ['client_credentials'],
        redirectUris: [],
        allowedScopes: ['uns:read', 'uns:publish'],
      });
      const laterOrg = await buildOrganization(server, 'Created later');
      const token = (await clientCredentials(server, gateway)).body.access_token as string;
      assert.equal((await publish(token, server.orgId)).status, 200);
      assert.equal((await latest(token, server.orgId)).status, 200);
      for (const org of [otherOrg, laterOrg]) {
        const published = await publish(token, org);
        assert.equal(published.status, 422, `publish in ${org}`);
        assert.equal(published.body.error, 'missing_organization');
        assert.equal((await latest(token, org)).status, 422, `read in ${org}`);
      }
      // Nothing reached the other organizations.
      for (const org of [otherOrg, laterOrg]) {
        const read = await server.admin.inOrg(org).get(`/api/v1/uns/data/latest?topic=${TOPIC}`);
        assert.notEqual(read.status, 200, `no value in ${org}: ${read.status}`);
      }
    });

    it('an edit of the organizations applies at once to tokens already issued', async () => {
      const client = await registerClient(server, {
        grantTypes: ['client_credentials'],
        redirectUris: [],
        allowedScopes: ['uns:read'],
      });
      const token = (await clientCredentials(server, client)).body.access_token as string;
      assert.equal((await latest(token, otherOrg)).status, 422);
      const edited = await server.admin.patch(`/api/v1/oauth2/clients/${client.id}`, {
        organizationIds: [otherOrg],
      });
      assert.equal(edited.status, 200);
      assert.deepEqual(edited.body.data.organizationIds, [otherOrg]);
      assert.notEqual((await latest(token, otherOrg)).status, 422);
      assert.equal((await latest(token, server.orgId)).status, 422);
    });

    it('refuses organizationIds that are empty, malformed or unknown (400, nothing changed)', async () => {
      for (const organizationIds of [[], ['plant'], ['00000000-0000-4000-8000-000000000000']]) {
        const res = await server.admin.post('/api/v1/oauth2/clients', {
          name: 'Bad',
          clientType: 'confidential',
          grantTypes: ['client_credentials'],
          allowedScopes: ['uns:read'],
          organizationIds,
        });
        assert.equal(res.status, 400, JSON.stringify(organizationIds));
        assert.match(res.body.message, /organizationIds/);
      }
      const client = await registerClient(server, { grantTypes: ['client_credentials'], redirectUris: [] });
      const res = await server.admin.patch(`/api/v1/oauth2/clients/${client.id}`, { organizationIds: [] });
      assert.equal(res.status, 400);
      const viewed = await server.admin.get(`/api/v1/oauth2/clients/${client.id}`);
      assert.deepEqual(viewed.body.data.organizationIds, [server.orgId]);
    });

    it("within its organizations the acting user's memberships and role still apply", async () => {
      const user = await buildUser(server);
      await addMember(server, server.orgId, user.id, 'Viewer');
      const client = await registerClient(server, {
        grantTypes: ['client_credentials'],
        redirectUris: [],
        allowedScopes: ['uns:read', 'uns:publish'],
        actingUserId: user.id,
        organizationIds: [server.orgId, otherOrg],
      });
      const res = await clientCredentials(server, client);
      assert.equal(res.status, 200);
      assert.equal(res.body.scope, 'uns:read', 'a Viewer is not issued uns:publish');
      const token = res.body.access_token as string;
      assert.equal((await latest(token, server.orgId)).status, 200);
      assert.equal((await publish(token, server.orgId)).status, 403);
      assert.equal((await latest(token, otherOrg)).status, 422, 'bound, but the user is not a member');
    });

    it('refuses a client_credentials token when the acting user is in none of its organizations', async () => {
      const user = await buildUser(server);
      await addMember(server, otherOrg, user.id, 'Editor');
      const client = await registerClient(server, {
        grantTypes: ['client_credentials'],
        redirectUris: [],
        actingUserId: user.id,
      });
      const res = await clientCredentials(server, client);
      assert.equal(res.status, 400);
      assert.equal(res.body.error, 'invalid_grant');
    });

    it('authorization code: refused for a user outside its organizations; a refresh stops when the binding moves', async () => {
      const outsider = await buildUser(server);
      await addMember(server, otherOrg, outsider.id, 'Editor');
      const app = await registerClient(server, { organizationIds: [server.orgId] });
      const pkce = pkcePair();
      const location = await authorizeInBrowser(
        new Browser(server.url),
        authorizeUrl(server, {
          response_type: 'code',
          client_id: app.clientId,
          redirect_uri: REDIRECT_URI,
          scope: 'openid uns:read',
          state: 's',
          code_challenge: pkce.challenge,
          code_challenge_method: 'S256',
        }),
        outsider,
      );
      assert.equal(new URL(location).searchParams.get('error'), 'access_denied');

      const member = await buildUser(server);
      await addMember(server, server.orgId, member.id, 'Viewer');
      const { token } = await codeFlow(server, app, member, { scope: 'openid uns:read' });
      assert.equal(token.status, 200);
      assert.equal((await latest(token.body.access_token, server.orgId)).status, 200);
      assert.equal((await latest(token.body.access_token, otherOrg)).status, 422);
      await server.admin.patch(`/api/v1/oauth2/clients/${app.id}`, { organizationIds: [otherOrg] });
      const refreshed = await postForm(server, '/api/v1/oauth2/token', {
        grant_type: 'refresh_token',
        refresh_token: token.body.refresh_token,
        client_id: app.clientId,
        client_secret: app.clientSecret!,
      });
      assert.equal(refreshed.status, 400);
      assert.equal(refreshed.body.error, 'invalid_grant');
    });
  });
}
