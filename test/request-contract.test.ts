import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { testDialects } from './helpers/dialects.js';
import { buildOrganization, signedInMember } from './helpers/factories.js';
import type { TestClient } from './helpers/http-client.js';
import { startTestServer, type TestServer } from './helpers/test-server.js';

const ORG_422 = {
  error: 'missing_organization',
  message: 'X-Organization-ID must name an active organization you are a member of',
};

for (const dialect of testDialects()) {
  describe(`request contract [${dialect}]`, () => {
    let server: TestServer;
    let viewer: TestClient;

    before(async () => {
      server = await startTestServer(dialect, {
        config: { bodyLimit: 2048 },
        extend: (app) => {
          app.get('/api/v1/test/boom', { config: { access: { scope: null } } }, async () => {
            throw new Error('secret internal detail: password=hunter2');
          });
        },
      });
      viewer = (await signedInMember(server, 'Viewer')).client;
    });
    after(() => server?.close());

    describe('1. authentication (401, body with message and no error member)', () => {
      it('answers 401 when no credential is sent', async () => {
        const res = await server.client.get('/api/v1/organizations', { org: server.orgId });
        assert.equal(res.status, 401);
        assert.equal(typeof res.body.message, 'string');
        assert.equal('error' in res.body, false);
        assert.match(res.headers.get('www-authenticate') ?? '', /^Bearer/);
      });

      it('answers 401 to Bearer with garbage', async () => {
        const res = await server.client.get('/api/v1/organizations', { token: 'garbage', org: server.orgId });
        assert.equal(res.status, 401);
        assert.deepEqual(Object.keys(res.body), ['message']);
      });

      it('answers 401 to an Authorization header that is not Bearer', async () => {
        const res = await server.client.get('/api/v1/organizations', {
          headers: { authorization: 'Basic YWRtaW46YWRtaW4=' },
          org: server.orgId,
        });
        assert.equal(res.status, 401);
        assert.deepEqual(Object.keys(res.body), ['message']);
      });

      it('answers 401 to a forged or unknown session cookie', async () => {
        const forged = server.client.as({
          cookie: 'meridian_session=mrd_ses_notarealsessiontoken',
          org: server.orgId,
        });
        const res = await forged.get('/api/v1/organizations');
        assert.equal(res.status, 401);
      });

      it('checks authentication before the organization header', async () => {
        const res = await server.client.get('/api/v1/organizations', { org: 'not-a-uuid' });
        assert.equal(res.status, 401);
      });

      it('ends a session at logout', async () => {
        const { client } = await signedInMember(server, 'Viewer');
        assert.equal((await client.get('/api/v1/organizations')).status, 200);
        assert.equal((await client.post('/api/v1/auth/logout')).status, 204);
        assert.equal((await client.get('/api/v1/organizations')).status, 401);
      });
    });

    describe('2. organization (422, one body for every cause)', () => {
      const cases: [string, () => string | null][] = [
        ['missing', () => null],
        ['malformed', () => 'acme'],
        ['unknown', () => '00000000-0000-4000-8000-000000000000'],
      ];
      for (const [name, org] of cases) {
        it(`answers 422 missing_organization when the header is ${name}`, async () => {
          const res = await viewer.get('/api/v1/organizations', { org: org() });
          assert.equal(res.status, 422);
          assert.deepEqual(res.body, ORG_422);
        });
      }

      it('answers 422 with the same body for an organization the caller is not a member of', async () => {
        const foreign = await buildOrganization(server);
        const res = await viewer.get('/api/v1/organizations', { org: foreign });
        assert.equal(res.status, 422);
        assert.deepEqual(res.body, ORG_422);
      });

      it('answers 422 to members of a suspended organization', async () => {
        const { client, user } = await signedInMember(server, 'Editor');
        const suspended = await buildOrganization(server);
        await server.admin.put(`/api/v1/organizations/${suspended}/members/${user.id}`, { role: 'Editor' });
        assert.equal((await client.get('/api/v1/organizations', { org: suspended })).status, 200);
        assert.equal((await server.admin.post(`/api/v1/organizations/${suspended}/suspend`)).status, 200);
        const res = await client.get('/api/v1/organizations', { org: suspended });
        assert.equal(res.status, 422);
        assert.deepEqual(res.body, ORG_422);
      });

      it('checks the organization before the scope', async () => {
        const res = await viewer.get('/api/v1/admin/users', { org: null });
        assert.equal(res.status, 422);
      });
    });

    describe('3. permission (403 insufficient_scope)', () => {
      it('answers 403 when the role does not allow the operation, naming what it requires', async () => {
        const res = await viewer.get('/api/v1/admin/users');
        assert.equal(res.status, 403);
        assert.equal(res.body.error, 'insufficient_scope');
        assert.match(res.body.message, /requires/);
      });

      it('answers 403 to a Viewer creating an organization before looking at the body', async () => {
        const res = await viewer.post('/api/v1/organizations', { wrong: true });
        assert.equal(res.status, 403);
        assert.equal(res.body.error, 'insufficient_scope');
      });

      it('refuses an unsafe session request without its CSRF token', async () => {
        const noCsrf = server.admin.as({
          cookie: (server.admin as unknown as { credential: { cookie: string } }).credential.cookie,
          org: server.orgId,
        });
        const res = await noCsrf.post('/api/v1/organizations', { name: 'Sneaky' });
        assert.equal(res.status, 403);
        assert.equal(res.body.error, 'csrf_rejected');
      });
    });

    describe('4. input (400 bad_request naming the field)', () => {
      it('answers 400 to invalid JSON', async () => {
        const res = await server.admin.request('POST', '/api/v1/organizations', {
          raw: '{"name": ',
          headers: { 'content-type': 'application/json' },
        });
        assert.equal(res.status, 400);
        assert.deepEqual(res.body, { error: 'bad_request', message: 'body is not valid JSON' });
      });

      it('answers 400 to a wrong content type', async () => {
        const res = await server.admin.request('POST', '/api/v1/organizations', {
          raw: 'name=Acme',
          headers: { 'content-type': 'text/plain' },
        });
        assert.equal(res.status, 400);
        assert.equal(res.body.error, 'bad_request');
        assert.match(res.body.message, /content-type/);
      });

      it('names a missing required field', async () => {
        const res = await server.admin.post('/api/v1/organizations', {});
        assert.equal(res.status, 400);
        assert.deepEqual(res.body, { error: 'bad_request', message: 'name is required' });
      });

      it('names an unknown field', async () => {
        const res = await server.admin.post('/api/v1/organizations', { name: 'Acme', colour: 'red' });
        assert.equal(res.status, 400);
        assert.deepEqual(res.body, { error: 'bad_request', message: 'colour is not a known field' });
      });

      it('names a field of the wrong type', async () => {
        const res = await server.admin.post('/api/v1/organizations', { name: 42 });
        assert.equal(res.status, 400);
        assert.equal(res.body.message, 'name must be string');
      });

      it('names a bad query parameter', async () => {
        const res = await server.admin.get('/api/v1/admin/users?limit=1000');
        assert.equal(res.status, 400);
        assert.match(res.body.message, /^query parameter limit /);
      });

      it('names a malformed path parameter', async () => {
        const res = await server.admin.get('/api/v1/admin/users/not-a-uuid');
        assert.equal(res.status, 400);
        assert.match(res.body.message, /^path parameter id /);
      });

      it('answers 413 payload_too_large to a body over the limit and changes nothing', async () => {
        const before = await server.admin.get('/api/v1/organizations');
        const res = await server.admin.post('/api/v1/organizations', { name: 'x'.repeat(4000) });
        assert.equal(res.status, 413);
        assert.equal(res.body.error, 'payload_too_large');
        const afterList = await server.admin.get('/api/v1/organizations');
        assert.equal(afterList.body.pagination.total, before.body.pagination.total);
      });
    });

    describe('5. existence and the other shapes', () => {
      it('answers 404 not_found to an unknown route', async () => {
        const res = await server.admin.get('/api/v1/no/such/route');
        assert.equal(res.status, 404);
        assert.equal(res.body.error, 'not_found');
        assert.equal(typeof res.body.message, 'string');
      });

      it('answers 404 not_found to an unknown resource', async () => {
        const res = await server.admin.get('/api/v1/admin/users/00000000-0000-4000-8000-000000000000');
        assert.equal(res.status, 404);
        assert.deepEqual(res.body, { error: 'not_found', message: 'user not found' });
      });

      it('answers 409 conflict to a duplicate unique value', async () => {
        const body = { email: 'dup@example.com', displayName: 'Dup', password: 'a-long-password' };
        assert.equal((await server.admin.post('/api/v1/admin/users', body)).status, 201);
        const res = await server.admin.post('/api/v1/admin/users', { ...body, email: 'DUP@example.com' });
        assert.equal(res.status, 409);
        assert.equal(res.body.error, 'conflict');
      });

      it('answers 500 internal_error with the request id and without internals', async () => {
        const res = await server.admin.get('/api/v1/test/boom');
        assert.equal(res.status, 500);
        assert.equal(res.body.error, 'internal_error');
        assert.equal(res.body.requestId, res.headers.get('x-request-id'));
        assert.doesNotMatch(res.text, /hunter2|secret internal detail/);
      });

      it('echoes a well-formed incoming X-Request-ID and replaces a malformed one', async () => {
        const echoed = await server.client.get('/healthz', { headers: { 'x-request-id': 'trace-123' } });
        assert.equal(echoed.headers.get('x-request-id'), 'trace-123');
        const replaced = await server.client.get('/healthz', {
          headers: { 'x-request-id': 'bad id\twith tab' },
        });
        assert.notEqual(replaced.headers.get('x-request-id'), 'bad id\twith tab');
      });
    });
  });
}
