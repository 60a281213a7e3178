import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { testDialects } from '../helpers/dialects.js';
import { addMember, buildUser } from '../helpers/factories.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';
import { codeFlow, postForm, registerClient } from './oauth2-helpers.js';

for (const dialect of testDialects()) {
  describe(`interactive reference (/api/docs) authorization [${dialect}]`, () => {
    let server: TestServer;
    let docs: {
      components: {
        securitySchemes: {
          oauth2: { flows: Record<string, { authorizationUrl?: string; tokenUrl: string }> };
        };
      };
      paths: Record<string, unknown>;
    };
    before(async () => {
      server = await startTestServer(dialect);
      docs = (await (await fetch(`${server.url}/api/docs/json`)).json()) as typeof docs;
    });
    after(() => server?.close());

    it('sends a CSP and anti-framing headers on every page and file of the reference', async () => {
      for (const path of [
        '/api/docs',
        '/api/docs/static/index.html',
        '/api/docs/static/swagger-initializer.js',
        '/api/docs/static/oauth2-redirect.html',
        '/api/docs/json',
      ]) {
        const res = await fetch(`${server.url}${path}`, { redirect: 'manual' });
        assert.ok(res.status === 200 || res.status === 302, `${path}: ${res.status}`);
        const csp = res.headers.get('content-security-policy') ?? '';
        assert.match(csp, /frame-ancestors 'none'/, path);
        assert.match(csp, /script-src 'self'(;|$)/, path);
        assert.match(csp, /default-src 'none'/, path);
        assert.doesNotMatch(csp, /unsafe-eval|script-src[^;]*unsafe-inline/, path);
        assert.equal(res.headers.get('x-frame-options'), 'DENY', path);
        assert.equal(res.headers.get('x-content-type-options'), 'nosniff', path);
        await res.arrayBuffer();
      }
      const html = await (await fetch(`${server.url}/api/docs/static/index.html`)).text();
      assert.doesNotMatch(html, /<script(?![^>]*\bsrc=)[^>]*>/, 'no inline script the CSP would block');
    });

    it('points its OAuth2 flows at the endpoints the discovery document names', async () => {
      const discovery = (await (
        await fetch(`${server.url}/.well-known/openid-configuration`)
      ).json()) as Record<string, string>;
      const flows = docs.components.securitySchemes.oauth2.flows;
      assert.equal(flows.authorizationCode?.authorizationUrl, discovery.authorization_endpoint);
      assert.equal(flows.authorizationCode?.tokenUrl, discovery.token_endpoint);
      assert.equal(flows.clientCredentials?.tokenUrl, discovery.token_endpoint);
      for (const path of ['/api/v1/oauth2/clients', '/api/v1/oauth2/tokens', '/api/v1/oauth2/token'])
        assert.ok(path in docs.paths, path);
    });

    it('completes the authorization code flow with PKCE for a public client registered for its redirect page', async () => {
      const redirectUri = `${server.url}/api/docs/static/oauth2-redirect.html`;
      assert.equal((await fetch(redirectUri)).status, 200);
      const client = await registerClient(server, {
        name: 'API reference',
        clientType: 'public',
        grantTypes: ['authorization_code'],
        redirectUris: [redirectUri],
      });
      const user = await buildUser(server);
      await addMember(server, server.orgId, user.id, 'Viewer');
      const { token } = await codeFlow(server, client, user, { redirectUri, scope: 'organizations:read' });
      assert.equal(token.status, 200);
      const res = await server.client.get('/api/v1/organizations', {
        token: token.body.access_token,
        org: server.orgId,
      });
      assert.equal(res.status, 200);
    });

    it('authorizes with client credentials sent the way the reference sends them (Basic)', async () => {
      const client = await registerClient(server, { grantTypes: ['client_credentials'], redirectUris: [] });
      const res = await postForm(
        server,
        '/api/v1/oauth2/token',
        { grant_type: 'client_credentials', scope: 'organizations:read' },
        { basic: [client.clientId, client.clientSecret!] },
      );
      assert.equal(res.status, 200);
    });
  });
}
