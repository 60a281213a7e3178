import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createRemoteJWKSet, jwtVerify } from 'jose';
import * as oidc from 'openid-client';
import { testDialects } from '../helpers/dialects.js';
import { addMember, type BuiltUser, buildUser } from '../helpers/factories.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';
import {
  authorizeInBrowser,
  Browser,
  REDIRECT_URI,
  type RegisteredClient,
  registerClient,
} from './oauth2-helpers.js';

for (const dialect of testDialects()) {
  describe(`black box: openid-client [${dialect}]`, () => {
    let server: TestServer;
    let registered: RegisteredClient;
    let user: BuiltUser;
    let config: oidc.Configuration;
    let tokens: oidc.TokenEndpointResponse & oidc.TokenEndpointResponseHelpers;

    before(async () => {
      server = await startTestServer(dialect);
      registered = await registerClient(server);
      user = await buildUser(server);
      await addMember(server, server.orgId, user.id, 'Viewer');
      config = await oidc.discovery(
        new URL(server.url),
        registered.clientId,
        registered.clientSecret,
        undefined,
        {
          execute: [oidc.allowInsecureRequests],
        },
      );
    });
    after(() => server?.close());

    const verifyAccessToken = (token: string) =>
      jwtVerify(token, createRemoteJWKSet(new URL(`${server.url}/.well-known/jwks.json`)), {
        issuer: server.url,
        audience: `${server.url}/api/v1`,
        typ: 'at+jwt',
        algorithms: ['ES256'],
      });

    it('discovers the server', () => {
      const metadata = config.serverMetadata();
      assert.equal(metadata.issuer, server.url);
      assert.equal(metadata.token_endpoint, `${server.url}/api/v1/oauth2/token`);
    });

    it('runs the authorization code flow with PKCE and verifies the ID token', async () => {
      const verifier = oidc.randomPKCECodeVerifier();
      const state = oidc.randomState();
      const nonce = oidc.randomNonce();
      const url = oidc.buildAuthorizationUrl(config, {
        redirect_uri: REDIRECT_URI,
        scope: 'openid profile email organizations:read',
        code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
        code_challenge_method: 'S256',
        state,
        nonce,
      });
      const callback = await authorizeInBrowser(new Browser(server.url), url.href, user);
      tokens = await oidc.authorizationCodeGrant(config, new URL(callback), {
        pkceCodeVerifier: verifier,
        expectedState: state,
        expectedNonce: nonce,
      });
      const claims = tokens.claims();
      assert.equal(claims?.sub, user.id);
      assert.equal(claims?.email, user.email);
      const { payload } = await verifyAccessToken(tokens.access_token);
      assert.equal(payload.sub, user.id);
      assert.equal(payload.client_id, registered.clientId);
    });

    it('calls the API with the access token', async () => {
      const res = await oidc.fetchProtectedResource(
        config,
        tokens.access_token,
        new URL(`${server.url}/api/v1/organizations`),
        'GET',
        undefined,
        new Headers({ 'x-organization-id': server.orgId }),
      );
      assert.equal(res.status, 200);
    });

    it('reads userinfo', async () => {
      const info = await oidc.fetchUserInfo(config, tokens.access_token, user.id);
      assert.equal(info.sub, user.id);
      assert.equal(info.email, user.email);
      assert.equal(typeof info.name, 'string');
    });

    it('refreshes, rotating the refresh token', async () => {
      const refreshed = await oidc.refreshTokenGrant(config, tokens.refresh_token!);
      assert.notEqual(refreshed.refresh_token, tokens.refresh_token);
      await verifyAccessToken(refreshed.access_token);
      tokens = refreshed;
    });

    it('introspects and revokes', async () => {
      const active = await oidc.tokenIntrospection(config, tokens.access_token);
      assert.equal(active.active, true);
      assert.equal(active.sub, user.id);
      await oidc.tokenRevocation(config, tokens.access_token);
      const inactive = await oidc.tokenIntrospection(config, tokens.access_token);
      assert.equal(inactive.active, false);
    });

    it('runs client credentials', async () => {
      const cc = await oidc.clientCredentialsGrant(config, { scope: 'organizations:read' });
      assert.equal(cc.scope, 'organizations:read');
      assert.equal(cc.token_type, 'bearer');
      const { payload } = await verifyAccessToken(cc.access_token);
      assert.equal(payload.sub, server.adminId);
    });
  });
}
