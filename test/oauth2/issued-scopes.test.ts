import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { testDialects } from '../helpers/dialects.js';
import { addMember, buildOrganization, buildUser } from '../helpers/factories.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';
import {
  authorizeUrl,
  Browser,
  clientCredentials,
  codeFlow,
  pkcePair,
  REDIRECT_URI,
  readForm,
  registerClient,
} from './oauth2-helpers.js';

/** Issue 25, finding 9: scopes are cut to what the user's role can use at issuance, not only at use. */
for (const dialect of testDialects()) {
  describe(`scopes intersected with the user's role at issuance [${dialect}]`, () => {
    let server: TestServer;
    before(async () => {
      server = await startTestServer(dialect);
    });
    after(() => server?.close());

    const ALLOWED = ['openid', 'uns:read', 'uns:publish', 'users:write', 'system:admin', 'plant.custom'];

    it('a Viewer is neither shown nor granted system:admin (authorization code)', async () => {
      const viewer = await buildUser(server);
      await addMember(server, server.orgId, viewer.id, 'Viewer');
      const app = await registerClient(server, { allowedScopes: ALLOWED });
      const browser = new Browser(server.url);
      const login = readForm(
        (
          await browser.request(
            authorizeUrl(server, {
              response_type: 'code',
              client_id: app.clientId,
              redirect_uri: REDIRECT_URI,
              scope: ALLOWED.join(' '),
              state: 's',
              code_challenge: pkcePair().challenge,
              code_challenge_method: 'S256',
            }),
          )
        ).text,
      );
      const signedIn = await browser.request(login.action, {
        form: { ...login.fields, email: viewer.email, password: viewer.password },
      });
      const consent = await browser.request(signedIn.location!);
      assert.equal(consent.status, 200);
      assert.deepEqual(readForm(consent.text).scopes, ['openid', 'uns:read', 'plant.custom']);
      assert.doesNotMatch(consent.text, /system:admin/);

      const { token } = await codeFlow(server, app, viewer, { scope: ALLOWED.join(' ') });
      assert.equal(token.status, 200);
      assert.equal(token.body.scope, 'openid uns:read plant.custom');
      const claims = JSON.parse(Buffer.from(token.body.access_token.split('.')[1], 'base64url').toString());
      assert.equal(claims.scope, 'openid uns:read plant.custom');
    });

    it('a client acting as a Viewer gets only the Viewer scopes; one asking only beyond them is refused', async () => {
      const viewer = await buildUser(server);
      await addMember(server, server.orgId, viewer.id, 'Viewer');
      const client = await registerClient(server, {
        grantTypes: ['client_credentials'],
        redirectUris: [],
        allowedScopes: ALLOWED.filter((s) => s !== 'openid'),
        actingUserId: viewer.id,
      });
      const all = await clientCredentials(server, client);
      assert.equal(all.status, 200);
      assert.equal(all.body.scope, 'uns:read plant.custom');
      const beyond = await clientCredentials(server, client, 'system:admin users:write');
      assert.equal(beyond.status, 400);
      assert.equal(beyond.body.error, 'invalid_scope');
    });

    it('a role changed, a membership removed or an organization suspended applies to the next client credentials token', async () => {
      const org = await buildOrganization(server);
      const user = await buildUser(server);
      await addMember(server, org, user.id, 'Editor');
      const client = await registerClient(server, {
        grantTypes: ['client_credentials'],
        redirectUris: [],
        allowedScopes: ['uns:read', 'uns:publish'],
        actingUserId: user.id,
        organizationIds: [org],
      });
      const scopeNow = async () => {
        const res = await clientCredentials(server, client);
        return res.status === 200 ? res.body.scope : res.body.error;
      };
      assert.equal(await scopeNow(), 'uns:read uns:publish');
      assert.equal(
        await scopeNow(),
        'uns:read uns:publish',
        'asked twice: the second answer may come from a cache',
      );
      await addMember(server, org, user.id, 'Viewer');
      assert.equal(await scopeNow(), 'uns:read', 'lowered to Viewer');
      await addMember(server, org, user.id, 'Editor');
      assert.equal(await scopeNow(), 'uns:read uns:publish', 'raised to Editor again');
      await removeFrom(org, user.id);
      assert.equal(await scopeNow(), 'invalid_grant', 'no longer a member');
      await addMember(server, org, user.id, 'Editor');
      assert.equal(await scopeNow(), 'uns:read uns:publish');
      assert.equal((await server.admin.post(`/api/v1/organizations/${org}/suspend`)).status, 200);
      assert.equal(await scopeNow(), 'invalid_grant', 'the organization is suspended');
      assert.equal((await server.admin.post(`/api/v1/organizations/${org}/activate`)).status, 200);
      assert.equal(await scopeNow(), 'uns:read uns:publish');
      assert.equal(
        (await server.admin.patch(`/api/v1/admin/users/${user.id}`, { isSystemAdmin: true })).status,
        200,
      );
      await removeFrom(org, user.id);
      assert.equal(
        await scopeNow(),
        'uns:read uns:publish',
        'a System Administrator acts as Owner without a membership',
      );
      assert.equal(
        (await server.admin.patch(`/api/v1/admin/users/${user.id}`, { isSystemAdmin: false })).status,
        200,
      );
      assert.equal(await scopeNow(), 'invalid_grant', 'no longer a System Administrator, and no membership');
    });

    const removeFrom = async (org: string, userId: string) =>
      assert.equal((await server.admin.delete(`/api/v1/organizations/${org}/members/${userId}`)).status, 204);

    it("a System Administrator's client keeps system:admin", async () => {
      const client = await registerClient(server, {
        grantTypes: ['client_credentials'],
        redirectUris: [],
        allowedScopes: ['system:admin'],
      });
      const res = await clientCredentials(server, client);
      assert.equal(res.body.scope, 'system:admin');
    });
  });
}
