import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createRemoteJWKSet, jwtVerify } from 'jose';
import * as oauth from 'oauth4webapi';
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

const insecure = { [oauth.allowInsecureRequests]: true };

for (const dialect of testDialects()) {
  describe(`black box: oauth4webapi [${dialect}]`, () => {
    let server: TestServer;
    let as: oauth.AuthorizationServer;
    let spa: RegisteredClient;
    let backend: RegisteredClient;
    let user: BuiltUser;
    let accessToken: string;
    let refreshToken: string;

    before(async () => {
      server = await startTestServer(dialect);
      spa = await registerClient(server, {
        clientType: 'public',
        grantTypes: ['authorization_code', 'refresh_token'],
      });
      backend = await registerClient(server, { grantTypes: ['client_credentials'], redirectUris: [] });
      user = await buildUser(server);
      await addMember(server, server.orgId, user.id, 'Editor');
      const issuer = new URL(server.url);
      as = await oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, insecure));
    });
    after(() => server?.close());

    const validateAccessToken = (token: string) =>
      oauth.validateJwtAccessToken(
        as,
        new Request(`${server.url}/api/v1/organizations`, { headers: { authorization: `Bearer ${token}` } }),
        `${server.url}/api/v1`,
        insecure,
      );

    it('discovers the server', () => {
      assert.equal(as.issuer, server.url);
      assert.deepEqual(as.code_challenge_methods_supported, ['S256']);
    });

    it('runs the authorization code flow with PKCE as a public client (auth method none)', async () => {
      const client = { client_id: spa.clientId };
      const verifier = oauth.generateRandomCodeVerifier();
      const state = oauth.generateRandomState();
      const nonce = oauth.generateRandomNonce();
      const url = new URL(as.authorization_endpoint!);
      url.search = new URLSearchParams({
        client_id: spa.clientId,
        redirect_uri: REDIRECT_URI,
        response_type: 'code',
        scope: 'openid profile uns:read organizations:read',
        code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
        code_challenge_method: 'S256',
        state,
        nonce,
      }).toString();
      const callback = await authorizeInBrowser(new Browser(server.url), url.href, user);
      const params = oauth.validateAuthResponse(as, client, new URL(callback), state);
      const response = await oauth.authorizationCodeGrantRequest(
        as,
        client,
        oauth.None(),
        params,
        REDIRECT_URI,
        verifier,
        insecure,
      );
      const result = await oauth.processAuthorizationCodeResponse(as, client, response, {
        expectedNonce: nonce,
        requireIdToken: true,
      });
      const claims = oauth.getValidatedIdTokenClaims(result)!;
      assert.equal(claims.sub, user.id);
      // The ID token's signature, against the JWKS.
      const jwks = createRemoteJWKSet(new URL(as.jwks_uri!));
      await jwtVerify(result.id_token!, jwks, {
        issuer: server.url,
        audience: spa.clientId,
        algorithms: ['RS256'],
      });
      const validated = await validateAccessToken(result.access_token);
      assert.equal(validated.sub, user.id);
      assert.equal(validated.client_id, spa.clientId);
      accessToken = result.access_token;
      refreshToken = result.refresh_token!;
    });

    it('reads userinfo', async () => {
      const client = { client_id: spa.clientId };
      const response = await oauth.userInfoRequest(as, client, accessToken, insecure);
      const info = await oauth.processUserInfoResponse(as, client, user.id, response);
      assert.equal(info.preferred_username, user.email);
    });

    it('refreshes, and a reused refresh token revokes the grant', async () => {
      const client = { client_id: spa.clientId };
      const response = await oauth.refreshTokenGrantRequest(as, client, oauth.None(), refreshToken, insecure);
      const refreshed = await oauth.processRefreshTokenResponse(as, client, response);
      await validateAccessToken(refreshed.access_token);
      const reuse = await oauth.refreshTokenGrantRequest(as, client, oauth.None(), refreshToken, insecure);
      await assert.rejects(
        oauth.processRefreshTokenResponse(as, client, reuse),
        (error: oauth.ResponseBodyError) => error.error === 'invalid_grant',
      );
      const api = await fetch(`${server.url}/api/v1/organizations`, {
        headers: { authorization: `Bearer ${refreshed.access_token}`, 'x-organization-id': server.orgId },
      });
      assert.equal(api.status, 401);
    });

    it('runs client credentials with client_secret_basic, introspects and revokes', async () => {
      const client = { client_id: backend.clientId };
      const auth = oauth.ClientSecretBasic(backend.clientSecret!);
      const response = await oauth.clientCredentialsGrantRequest(
        as,
        client,
        auth,
        new URLSearchParams({ scope: 'uns:read' }),
        insecure,
      );
      const result = await oauth.processClientCredentialsResponse(as, client, response);
      assert.equal(result.scope, 'uns:read');
      await validateAccessToken(result.access_token);
      const introspected = await oauth.processIntrospectionResponse(
        as,
        client,
        await oauth.introspectionRequest(as, client, auth, result.access_token, insecure),
      );
      assert.equal(introspected.active, true);
      assert.equal(introspected.client_id, backend.clientId);
      await oauth.processRevocationResponse(
        await oauth.revocationRequest(as, client, auth, result.access_token, insecure),
      );
      const after = await oauth.processIntrospectionResponse(
        as,
        client,
        await oauth.introspectionRequest(as, client, auth, result.access_token, insecure),
      );
      assert.equal(after.active, false);
      await assert.rejects(validateAccessToken('eyJhbGciOiJub25lIn0.eyJzdWIiOiJ4In0.'));
    });
  });
}
