import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { importJWK, SignJWT } from 'jose';
import { decryptPrivateKey } from '../../src/modules/oauth2/keys/signing-keys.js';
import { resolveKeyEncryptionKey } from '../../src/platform/secrets/key-encryption-key.js';
import { testDialects } from '../helpers/dialects.js';
import { addMember, buildUser, signedInMember } from '../helpers/factories.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';
import { clientCredentials, postForm, type RegisteredClient, registerClient } from './oauth2-helpers.js';

const TOKEN = '/api/v1/oauth2/token';
const KEK = 'test-key-encryption-key-of-at-least-32-characters';

for (const dialect of testDialects()) {
  describe(`token endpoint and bearer verification [${dialect}]`, () => {
    let server: TestServer;
    let client: RegisteredClient;
    const clock = { offset: 0, now: () => Date.now() + clock.offset };

    before(async () => {
      server = await startTestServer(dialect, { clock, config: { keyEncryptionKey: KEK } });
      client = await registerClient(server);
    });
    after(() => server?.close());

    const api = (token: string) => server.client.get('/api/v1/organizations', { token, org: server.orgId });
    const b64 = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');
    /** The audit entry of the token with `jti`; entries are written in batches shortly after the response. */
    const auditRowOf = async (jti: string) => {
      for (let i = 0; i < 100; i++) {
        const row = await server.storage.db
          .selectFrom('audit_log')
          .selectAll()
          .where('action', '=', 'oauth2_token.issued')
          .where('details', 'like', `%${jti}%`)
          .executeTakeFirst();
        if (row) return row;
        await sleep(20);
      }
      throw new Error(`no audit entry for ${jti}`);
    };

    describe('client credentials', () => {
      it('issues exactly the RFC 6749 response with no-store, a JWT the API accepts', async () => {
        const res = await clientCredentials(server, client, 'organizations:read uns:read');
        assert.equal(res.status, 200);
        assert.deepEqual(Object.keys(res.body).sort(), ['access_token', 'expires_in', 'scope', 'token_type']);
        assert.equal(res.body.token_type, 'bearer');
        assert.equal(res.body.expires_in, 3600);
        assert.equal(res.body.scope, 'organizations:read uns:read');
        assert.equal(res.headers.get('cache-control'), 'no-store');
        const header = JSON.parse(Buffer.from(res.body.access_token.split('.')[0], 'base64url').toString());
        assert.equal(header.typ, 'at+jwt');
        assert.equal(header.alg, 'ES256');
        const claims = JSON.parse(Buffer.from(res.body.access_token.split('.')[1], 'base64url').toString());
        assert.equal(claims.sub, server.adminId, 'without an acting user the token acts as the creator');
        assert.equal(claims.client_id, client.clientId);
        assert.equal(claims.aud, `${server.url}/api/v1`);
        assert.equal((await api(res.body.access_token)).status, 200);
      });

      it("defaults to the client's allowed scopes when no scope is requested", async () => {
        const res = await clientCredentials(server, client);
        assert.equal(res.body.scope, 'openid profile email uns:read organizations:read tokens:read');
      });

      it('accepts client_secret_basic', async () => {
        const res = await postForm(
          server,
          TOKEN,
          { grant_type: 'client_credentials' },
          { basic: [client.clientId, client.clientSecret!] },
        );
        assert.equal(res.status, 200);
      });

      it("acts as the acting user, with that user's role", async () => {
        const { user } = await signedInMember(server, 'Viewer');
        const acting = await registerClient(server, {
          grantTypes: ['client_credentials'],
          redirectUris: [],
          actingUserId: user.id,
          allowedScopes: ['organizations:read', 'users:read'],
        });
        const res = await clientCredentials(server, acting);
        const claims = JSON.parse(Buffer.from(res.body.access_token.split('.')[1], 'base64url').toString());
        assert.equal(claims.sub, user.id);
        assert.equal((await api(res.body.access_token)).status, 200);
        const users = await server.client.get('/api/v1/admin/users', {
          token: res.body.access_token,
          org: server.orgId,
        });
        assert.equal(users.status, 403, 'a Viewer may not list users even with users:read in the token');
      });

      it('refuses a scope beyond the allowed scopes with invalid_scope', async () => {
        const res = await clientCredentials(server, client, 'uns:read system:admin');
        assert.equal(res.status, 400);
        assert.equal(res.body.error, 'invalid_scope');
      });

      it('refuses a grant the client does not have with unauthorized_client', async () => {
        const codeOnly = await registerClient(server, { grantTypes: ['authorization_code'] });
        const res = await clientCredentials(server, codeOnly);
        assert.equal(res.status, 400);
        assert.equal(res.body.error, 'unauthorized_client');
      });

      it('refuses a wrong secret with 401 invalid_client (and a Basic challenge for Basic)', async () => {
        const post = await clientCredentials(server, { ...client, clientSecret: `${client.clientSecret}x` });
        assert.equal(post.status, 401);
        assert.equal(post.body.error, 'invalid_client');
        const basic = await postForm(
          server,
          TOKEN,
          { grant_type: 'client_credentials' },
          { basic: [client.clientId, 'mrd_cs_wrong'] },
        );
        assert.equal(basic.status, 401);
        assert.match(basic.headers.get('www-authenticate') ?? '', /^Basic/);
      });

      it('refuses an unknown client with invalid_client', async () => {
        const res = await clientCredentials(server, { ...client, clientId: 'mrd_ci_unknown' });
        assert.equal(res.status, 401);
        assert.equal(res.body.error, 'invalid_client');
      });

      it('refuses the secret in the query string', async () => {
        const res = await postForm(
          server,
          TOKEN,
          { grant_type: 'client_credentials', client_id: client.clientId },
          {
            query: `client_secret=${client.clientSecret}`,
          },
        );
        assert.equal(res.status, 400);
        assert.equal(res.body.error, 'invalid_request');
        assert.equal(JSON.stringify(res.body).includes(client.clientSecret!), false);
      });

      it('refuses an unknown grant type with unsupported_grant_type', async () => {
        const res = await postForm(server, TOKEN, {
          grant_type: 'password',
          client_id: client.clientId,
          client_secret: client.clientSecret!,
        });
        assert.equal(res.body.error, 'unsupported_grant_type');
      });

      it('refuses a JSON body and a repeated parameter with invalid_request', async () => {
        const json = await fetch(`${server.url}${TOKEN}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ grant_type: 'client_credentials' }),
        });
        assert.equal(json.status, 400);
        assert.equal(((await json.json()) as { error: string }).error, 'invalid_request');
        const repeated = await fetch(`${server.url}${TOKEN}`, {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          body: 'grant_type=client_credentials&grant_type=client_credentials',
        });
        assert.equal(((await repeated.json()) as { error: string }).error, 'invalid_request');
      });

      it('writes an audit entry naming the user and the client', async () => {
        const res = await clientCredentials(server, client, 'uns:read');
        const jti = JSON.parse(Buffer.from(res.body.access_token.split('.')[1], 'base64url').toString()).jti;
        const row = await auditRowOf(jti);
        assert.equal(row.actor_client_id, client.clientId);
        assert.equal(row.actor_user_id, server.adminId);
      });

      it('writes every column of each audit entry, in batches of more than one statement', async () => {
        // 57 tokens at once: one batch, written as a 50-row statement and single-row ones.
        const started = clock.now();
        const responses = await Promise.all(
          Array.from({ length: 57 }, () => clientCredentials(server, client, 'uns:read')),
        );
        for (const res of responses) {
          const jti = JSON.parse(
            Buffer.from(res.body.access_token.split('.')[1], 'base64url').toString(),
          ).jti;
          const row = await auditRowOf(jti);
          assert.match(row.id, /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
          assert.ok(Number(row.at) >= started - 1_000 && Number(row.at) <= clock.now(), `at ${row.at}`);
          assert.equal(row.organization_id, null);
          assert.equal(row.actor_user_id, server.adminId);
          assert.equal(row.actor_client_id, client.clientId);
          assert.equal(row.action, 'oauth2_token.issued');
          assert.equal(row.target_type, 'oauth2_client');
          assert.equal(row.target_id, client.clientId);
          assert.deepEqual(JSON.parse(row.details ?? ''), {
            grantType: 'client_credentials',
            scope: 'uns:read',
            jti,
          });
          assert.equal(typeof row.request_id, 'string');
          assert.ok(row.request_id);
        }
      });
    });

    describe('bearer verification on API routes', () => {
      let jwks: { keys: Record<string, string>[] };
      before(async () => {
        jwks = (await (await fetch(`${server.url}/.well-known/jwks.json`)).json()) as typeof jwks;
      });
      const esKey = () => jwks.keys.find((k) => k.alg === 'ES256')!;
      const claims = (extra: object = {}) => ({
        iss: server.url,
        sub: server.adminId,
        client_id: client.clientId,
        scope: 'organizations:read',
        aud: `${server.url}/api/v1`,
        iat: Math.floor(Date.now() / 1000),
        exp: Math.floor(Date.now() / 1000) + 600,
        jti: 'x',
        ...extra,
      });

      it('refuses alg none', async () => {
        const token = `${b64({ alg: 'none', typ: 'at+jwt', kid: esKey().kid })}.${b64(claims())}.`;
        assert.equal((await api(token)).status, 401);
      });

      it('refuses HS256 signed with the public key', async () => {
        const header = b64({ alg: 'HS256', typ: 'at+jwt', kid: esKey().kid });
        const payload = b64(claims());
        const signature = createHmac('sha256', JSON.stringify(esKey()))
          .update(`${header}.${payload}`)
          .digest('base64url');
        assert.equal((await api(`${header}.${payload}.${signature}`)).status, 401);
      });

      it('refuses a token for another audience, signed with the real key', async () => {
        const row = await server.storage.db
          .selectFrom('oauth2_signing_keys')
          .selectAll()
          .where('alg', '=', 'ES256')
          .where('status', '=', 'active')
          .executeTakeFirstOrThrow();
        const kek = resolveKeyEncryptionKey({ keyEncryptionKey: KEK, dataDir: server.config.dataDir });
        const key = await importJWK(decryptPrivateKey(row.private_jwk_encrypted, row.kid, kek), 'ES256');
        const sign = (extra: object) =>
          new SignJWT(claims(extra))
            .setProtectedHeader({ alg: 'ES256', typ: 'at+jwt', kid: row.kid })
            .sign(key);
        assert.equal(
          (await api(await sign({}))).status,
          200,
          'the forged-but-correct token proves the key is the right one',
        );
        const res = await api(await sign({ aud: 'https://other.example.com' }));
        assert.equal(res.status, 401);
        assert.deepEqual(Object.keys(res.body), ['message']);
      });

      it('refuses an expired token', async () => {
        const res = await clientCredentials(server, client, 'organizations:read');
        assert.equal((await api(res.body.access_token)).status, 200);
        clock.offset = 3601_000 + 10_000;
        try {
          assert.equal((await api(res.body.access_token)).status, 401);
        } finally {
          clock.offset = 0;
        }
      });

      it('enforces the token scope with 403 insufficient_scope', async () => {
        const res = await clientCredentials(server, client, 'uns:read');
        const denied = await api(res.body.access_token);
        assert.equal(denied.status, 403);
        assert.equal(denied.body.error, 'insufficient_scope');
      });

      it('refuses a revoked access token on the next request', async () => {
        const res = await clientCredentials(server, client, 'organizations:read');
        const token = res.body.access_token;
        assert.equal((await api(token)).status, 200);
        const revoked = await postForm(server, '/api/v1/oauth2/revoke', {
          token,
          client_id: client.clientId,
          client_secret: client.clientSecret!,
        });
        assert.equal(revoked.status, 200);
        assert.equal((await api(token)).status, 401);
      });

      it('refuses an access token once its user is deactivated', async () => {
        const user = await buildUser(server);
        await addMember(server, server.orgId, user.id, 'Viewer');
        const acting = await registerClient(server, {
          grantTypes: ['client_credentials'],
          redirectUris: [],
          actingUserId: user.id,
        });
        const res = await clientCredentials(server, acting, 'openid');
        const token = res.body.access_token;
        assert.equal((await server.client.get('/api/v1/auth/session', { token })).status, 200);
        await server.admin.put(`/api/v1/admin/users/${user.id}/status`, { status: 'deactivated' });
        assert.equal((await server.client.get('/api/v1/auth/session', { token })).status, 401);
        assert.equal((await clientCredentials(server, acting)).body.error, 'invalid_grant');
      });
    });

    describe('rate limit', () => {
      it('answers 429 rate_limited with Retry-After past the per-client limit', async () => {
        const limited = await startTestServer(dialect, { config: { tokenRateLimitPerClient: 3 } });
        try {
          const c = await registerClient(limited);
          const statuses: number[] = [];
          let last: Awaited<ReturnType<typeof clientCredentials>> | undefined;
          for (let i = 0; i < 4; i++) {
            last = await clientCredentials(limited, c);
            statuses.push(last.status);
          }
          assert.deepEqual(statuses, [200, 200, 200, 429]);
          assert.equal(last!.body.error, 'rate_limited');
          assert.ok(Number(last!.headers.get('retry-after')) >= 1);
        } finally {
          await limited.close();
        }
      });
    });

    describe('discovery', () => {
      it('lists every endpoint, grant, PKCE method, auth method and the iss parameter support', async () => {
        const doc = (await (await fetch(`${server.url}/.well-known/openid-configuration`)).json()) as Record<
          string,
          unknown
        >;
        assert.equal(doc.issuer, server.url);
        for (const name of ['authorization', 'token', 'userinfo', 'introspection', 'revocation']) {
          assert.equal(typeof doc[`${name}_endpoint`], 'string', name);
        }
        assert.deepEqual(doc.grant_types_supported, [
          'authorization_code',
          'client_credentials',
          'refresh_token',
        ]);
        assert.deepEqual(doc.response_types_supported, ['code']);
        assert.deepEqual(doc.code_challenge_methods_supported, ['S256']);
        assert.deepEqual(doc.token_endpoint_auth_methods_supported, [
          'client_secret_basic',
          'client_secret_post',
          'none',
        ]);
        assert.deepEqual(doc.id_token_signing_alg_values_supported, ['RS256']);
        assert.equal(doc.authorization_response_iss_parameter_supported, true);
        assert.ok((doc.scopes_supported as string[]).includes('uns:publish'));
      });

      it('serves the public ES256 and RS256 keys without private parts', async () => {
        const jwks = (await (await fetch(`${server.url}/.well-known/jwks.json`)).json()) as {
          keys: Record<string, string>[];
        };
        assert.deepEqual(jwks.keys.map((k) => k.alg).sort(), ['ES256', 'RS256']);
        for (const key of jwks.keys) assert.equal(key.d, undefined);
      });
    });
  });
}
