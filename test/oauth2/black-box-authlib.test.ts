import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { testDialects } from '../helpers/dialects.js';
import { addMember, type BuiltUser, buildUser } from '../helpers/factories.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';
import { REDIRECT_URI, type RegisteredClient, registerClient } from './oauth2-helpers.js';

const SCRIPT = fileURLToPath(new URL('./authlib_client.py', import.meta.url));

for (const dialect of testDialects()) {
  describe(`black box: python3-authlib [${dialect}]`, () => {
    let server: TestServer;
    let client: RegisteredClient;
    let user: BuiltUser;

    before(async () => {
      server = await startTestServer(dialect);
      client = await registerClient(server);
      user = await buildUser(server);
      await addMember(server, server.orgId, user.id, 'Viewer');
    });
    after(() => server?.close());

    it('runs discovery, code + PKCE, refresh, client credentials, introspection, revocation and userinfo', async () => {
      const { stdout } = await promisify(execFile)(process.env.MERIDIAN_TEST_PYTHON ?? '/usr/bin/python3', [
        SCRIPT,
        server.url,
        client.clientId,
        client.clientSecret!,
        user.email,
        user.password,
        REDIRECT_URI,
        server.orgId,
      ]);
      const seen = JSON.parse(stdout);
      assert.equal(seen.issuer, server.url);
      assert.equal(seen.callback_iss, server.url);
      assert.equal(seen.id_token_sub, user.id);
      assert.equal(seen.access_token_sub, user.id);
      assert.equal(seen.access_token_typ, 'at+jwt');
      assert.equal(seen.scope, 'openid profile email organizations:read');
      assert.equal(seen.api_status, 200);
      assert.equal(seen.userinfo.sub, user.id);
      assert.equal(seen.userinfo.email, user.email);
      assert.equal(seen.refresh_rotated, true);
      assert.equal(seen.introspection_before.active, true);
      assert.equal(seen.revocation_status, 200);
      assert.deepEqual(seen.introspection_after, { active: false });
      assert.equal(seen.api_status_after_revocation, 401);
      assert.equal(seen.client_credentials_scope, 'uns:read');
      assert.equal(seen.client_credentials_client_id, client.clientId);
    });
  });
}
