import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { FastifyRequest } from 'fastify';
import { testDialects } from '../../test/helpers/dialects.js';
import { addMember, buildOrganization, buildUser } from '../../test/helpers/factories.js';
import { startTestServer, type TestServer } from '../../test/helpers/test-server.js';
import { clientCredentials, registerClient } from '../../test/oauth2/oauth2-helpers.js';
import type { OrganizationRole } from '../storage/tables.js';

/**
 * The request contract once a token's verification and its user's standing are cached: the second and
 * later requests are decided without a promise, and must be decided exactly as the first one was.
 */

/** Real time, or a fixed instant the test sets; the server reads time only through it. */
function settableClock() {
  let fixed: number | null = null;
  return { now: () => fixed ?? Date.now(), set: (ms: number | null) => (fixed = ms) };
}

const SCOPES = 'organizations:read organizations:write';

for (const dialect of testDialects()) {
  describe(`access control from cached credentials [${dialect}]`, () => {
    let server: TestServer;
    const clock = settableClock();

    before(async () => {
      server = await startTestServer(dialect, {
        clock,
        extend: (app) => {
          const describeRequest = async (request: FastifyRequest) => ({
            userId: request.principal?.userId,
            organization: request.organization,
            grantedScopes: [...request.grantedScopes].sort(),
          });
          const read = { access: { scope: 'organizations:read' } };
          app.get('/api/v1/test/read', { config: read }, describeRequest);
          app.get(
            '/api/v1/test/write',
            { config: { access: { scope: 'organizations:write' } } },
            describeRequest,
          );
          const identity = { access: { scope: null, organization: false } };
          app.get('/api/v1/test/identity', { config: identity }, describeRequest);
        },
      });
    });
    after(() => server?.close());

    /** A member of `orgId` with `role`, and a client-credentials token acting as them. */
    async function memberToken(role: OrganizationRole, orgId = server.orgId) {
      const user = await buildUser(server);
      await addMember(server, orgId, user.id, role);
      const client = await registerClient(server, {
        grantTypes: ['client_credentials'],
        redirectUris: [],
        allowedScopes: SCOPES.split(' '),
        actingUserId: user.id,
      });
      const issued = await clientCredentials(server, client, SCOPES);
      assert.equal(issued.status, 200, JSON.stringify(issued.body));
      const token = issued.body.access_token as string;
      const exp = JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString()).exp as number;
      return { user, client, token, exp };
    }

    async function get(path: string, headers: Record<string, string>) {
      const response = await fetch(`${server.url}${path}`, { headers });
      return { status: response.status, body: (await response.json()) as any };
    }

    /** The same request twice: the first fills the caches, the second is answered from them. */
    async function twice(path: string, headers: Record<string, string>) {
      const first = await get(path, headers);
      const second = await get(path, headers);
      assert.deepEqual(second, first, 'the cached answer differs from the first one');
      return second;
    }

    it('answers a repeated request as it answered the first', async () => {
      const { user, token } = await memberToken('Viewer');
      const res = await twice('/api/v1/test/read', {
        authorization: `Bearer ${token}`,
        'x-organization-id': server.orgId,
      });
      assert.equal(res.status, 200);
      assert.deepEqual(res.body, {
        userId: user.id,
        organization: { id: server.orgId, role: 'Viewer' },
        grantedScopes: ['organizations:read'],
      });
      const identity = await twice('/api/v1/test/identity', { authorization: `Bearer ${token}` });
      assert.equal(identity.status, 200);
      assert.equal(identity.body.organization, null);
    });

    it('refuses a scope the role does not allow, from the cache too', async () => {
      const { token } = await memberToken('Viewer');
      const headers = { authorization: `Bearer ${token}`, 'x-organization-id': server.orgId };
      assert.equal((await get('/api/v1/test/read', headers)).status, 200);
      assert.equal((await twice('/api/v1/test/write', headers)).status, 403);
    });

    it('grants per organization: the same token in two organizations with two roles', async () => {
      const other = await buildOrganization(server);
      const { user, client, token } = await memberToken('Owner');
      await addMember(server, other, user.id, 'Viewer');
      const bound = await server.admin.patch(`/api/v1/oauth2/clients/${client.id}`, {
        organizationIds: [server.orgId, other],
      });
      assert.equal(bound.status, 200);
      const auth = { authorization: `Bearer ${token}` };
      for (let round = 0; round < 2; round++) {
        const owner = await get('/api/v1/test/read', { ...auth, 'x-organization-id': server.orgId });
        assert.deepEqual(owner.body.grantedScopes, ['organizations:read', 'organizations:write']);
        const viewer = await get('/api/v1/test/read', { ...auth, 'x-organization-id': other });
        assert.deepEqual(viewer.body.grantedScopes, ['organizations:read']);
        assert.equal((await get('/api/v1/test/write', { ...auth, 'x-organization-id': other })).status, 403);
      }
    });

    it('applies a lowered role on the next request', async () => {
      const { user, token } = await memberToken('Owner');
      const headers = { authorization: `Bearer ${token}`, 'x-organization-id': server.orgId };
      assert.equal((await twice('/api/v1/test/write', headers)).status, 200);
      await addMember(server, server.orgId, user.id, 'Viewer');
      assert.equal((await get('/api/v1/test/write', headers)).status, 403);
      const read = await get('/api/v1/test/read', headers);
      assert.deepEqual(read.body.grantedScopes, ['organizations:read']);
    });

    it('refuses a cached token once its user is deactivated', async () => {
      const { user, token } = await memberToken('Viewer');
      const headers = { authorization: `Bearer ${token}`, 'x-organization-id': server.orgId };
      assert.equal((await twice('/api/v1/test/read', headers)).status, 200);
      const deactivated = await server.admin.put(`/api/v1/admin/users/${user.id}/status`, {
        status: 'deactivated',
      });
      assert.equal(deactivated.status, 200, deactivated.text);
      assert.equal((await get('/api/v1/test/read', headers)).status, 401);
      assert.equal((await get('/api/v1/test/identity', headers)).status, 401);
    });

    it('answers 422 once the cached member leaves the organization', async () => {
      const { user, token } = await memberToken('Viewer');
      const headers = { authorization: `Bearer ${token}`, 'x-organization-id': server.orgId };
      assert.equal((await twice('/api/v1/test/read', headers)).status, 200);
      const removed = await server.admin.delete(`/api/v1/organizations/${server.orgId}/members/${user.id}`);
      assert.equal(removed.status, 204, removed.text);
      assert.equal((await get('/api/v1/test/read', headers)).status, 422);
    });

    it('checks a differently written organization header as the first request did', async () => {
      const { token } = await memberToken('Viewer');
      const auth = { authorization: `Bearer ${token}` };
      assert.equal(
        (await twice('/api/v1/test/read', { ...auth, 'x-organization-id': server.orgId })).status,
        200,
      );
      const upper = await twice('/api/v1/test/read', {
        ...auth,
        'x-organization-id': server.orgId.toUpperCase(),
      });
      assert.equal(upper.status, 200);
      assert.equal(upper.body.organization.id, server.orgId);
      for (const org of [`${server.orgId}x`, server.orgId.slice(1), 'acme']) {
        assert.equal(
          (await twice('/api/v1/test/read', { ...auth, 'x-organization-id': org })).status,
          422,
          org,
        );
      }
      assert.equal((await twice('/api/v1/test/read', auth)).status, 422);
    });

    it('refuses a malformed header that ends like a cached one', async () => {
      const { token } = await memberToken('Viewer');
      const org = { 'x-organization-id': server.orgId };
      assert.equal(
        (await twice('/api/v1/test/read', { ...org, authorization: `Bearer ${token}` })).status,
        200,
      );
      const malformed = [
        `Basic ${token}`,
        `Bearer  ${token}`,
        `Bearer ${token}.`,
        `Bearer ${token} x`,
        `Bearer x${token}`,
        `Bearer ${token.slice(1)}`,
        `Bearer ${token}!`,
        `Bearer ${token.slice(0, -1)}`,
        `Bearer ${token.slice(0, 10)}`,
        token,
      ];
      for (const authorization of malformed) {
        const res = await twice('/api/v1/test/read', { ...org, authorization });
        assert.equal(res.status, 401, authorization);
      }
      // The cached header itself still works after all of those.
      assert.equal(
        (await get('/api/v1/test/read', { ...org, authorization: `Bearer ${token}` })).status,
        200,
      );
    });

    it('accepts the same token written with another Bearer case, as the first check does', async () => {
      const { token } = await memberToken('Viewer');
      const org = { 'x-organization-id': server.orgId };
      for (const scheme of ['Bearer', 'bearer', 'BEARER']) {
        assert.equal(
          (await twice('/api/v1/test/read', { ...org, authorization: `${scheme} ${token}` })).status,
          200,
        );
      }
    });

    it('refuses a cached token as soon as it is revoked (RFC 7009)', async () => {
      const { client, token } = await memberToken('Viewer');
      const headers = { authorization: `Bearer ${token}`, 'x-organization-id': server.orgId };
      assert.equal((await twice('/api/v1/test/read', headers)).status, 200);
      const revoked = await fetch(`${server.url}/api/v1/oauth2/revoke`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ token, client_id: client.clientId, client_secret: client.clientSecret! }),
      });
      assert.equal(revoked.status, 200);
      assert.equal((await twice('/api/v1/test/read', headers)).status, 401);
    });

    it('refuses a cached token once its client is deleted', async () => {
      const { client, token } = await memberToken('Viewer');
      const headers = { authorization: `Bearer ${token}`, 'x-organization-id': server.orgId };
      assert.equal((await twice('/api/v1/test/read', headers)).status, 200);
      const deleted = await server.admin.delete(`/api/v1/oauth2/clients/${client.id}`);
      assert.equal(deleted.status, 204, deleted.text);
      assert.equal((await twice('/api/v1/test/read', headers)).status, 401);
    });

    // Last: it sets the clock past this test's token, and the tokens of the tests above.
    it('serves a cached token until its expiry and refuses it after', async () => {
      const { token, exp } = await memberToken('Viewer');
      const headers = { authorization: `Bearer ${token}`, 'x-organization-id': server.orgId };
      assert.equal((await twice('/api/v1/test/read', headers)).status, 200);
      clock.set(exp * 1000 - 1);
      assert.equal((await twice('/api/v1/test/read', headers)).status, 200);
      // Past exp and the 5 s of clock skew verifyAccessToken allows (ACCESS_TOKEN_CLOCK_SKEW_SECONDS).
      clock.set((exp + 6) * 1000);
      const refused = await twice('/api/v1/test/read', headers);
      assert.equal(refused.status, 401);
      assert.match(refused.body.message, /expired/);
      clock.set(null);
    });
  });
}
