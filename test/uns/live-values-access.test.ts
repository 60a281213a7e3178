import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { testDialects } from '../helpers/dialects.js';
import { addMember, buildUser } from '../helpers/factories.js';
import type { TestClient } from '../helpers/http-client.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';
import { clientCredentials, registerClient } from '../oauth2/oauth2-helpers.js';
import { isValue, openSse, type SseStream } from './sse-client.js';

const STREAM = '/api/v1/uns/data/stream?filter=v1/%23';

/** A clock the test can move forward; everything else reads the system time through it. */
function movableClock() {
  let offsetMs = 0;
  return { now: () => Date.now() + offsetMs, advance: (ms: number) => (offsetMs += ms) };
}

async function createPat(client: TestClient, scopes: string[]) {
  const res = await client.post('/api/v1/oauth2/tokens', {
    name: `live-${Date.now()}`,
    scopes,
    expiresInDays: 30,
  });
  assert.equal(res.status, 201, res.text);
  return res.body.data as { id: string; token: string };
}

/** A confidential client-credentials client and one access token with `uns:read` from it. */
async function clientCredentialsToken(server: TestServer) {
  const client = await registerClient(server, {
    name: `Live reader ${Date.now()}`,
    grantTypes: ['client_credentials'],
    redirectUris: [],
    allowedScopes: ['uns:read'],
  });
  const issued = await clientCredentials(server, client, 'uns:read');
  assert.equal(issued.status, 200);
  return {
    clientId: client.clientId,
    clientSecret: client.clientSecret!,
    accessToken: issued.body.access_token as string,
  };
}

const closedEvent = (stream: SseStream, what: string) =>
  stream
    .next((frame) => frame.event === 'closed', what)
    .then((frame) => {
      return JSON.parse(frame.data).message as string;
    });

for (const dialect of testDialects()) {
  describe(`UNS live values: a stream does not outlive its credential [${dialect}]`, () => {
    let server: TestServer;
    const clock = movableClock();
    const streams: SseStream[] = [];
    const open = async (credential: { token?: string; cookie?: string }) => {
      const stream = await openSse(`${server.url}${STREAM}`, { ...credential, org: server.orgId });
      assert.equal(stream.status, 200, JSON.stringify(stream.body));
      streams.push(stream);
      return stream;
    };

    before(async () => {
      server = await startTestServer(dialect, { clock, config: { unsStreamRecheck: 1 } });
    });
    after(async () => {
      for (const stream of streams) stream.close();
      await server?.close();
    });

    it('keeps a stream open while its credential stays valid', async () => {
      const pat = await createPat(server.admin, ['uns:read', 'uns:publish']);
      const stream = await open({ token: pat.token });
      await new Promise((resolve) => setTimeout(resolve, 2500));
      const res = await server.admin.post('/api/v1/uns/data/publish', { topic: 'v1/access/alive', value: 1 });
      assert.equal(res.status, 200);
      await stream.next(isValue('v1/access/alive'), 'a value after two re-checks');
      assert.ok(!stream.frames.some((frame) => frame.event === 'closed'));
    });

    it('ends the stream when its personal access token is revoked', async () => {
      const pat = await createPat(server.admin, ['uns:read']);
      const stream = await open({ token: pat.token });
      assert.equal((await server.admin.delete(`/api/v1/oauth2/tokens/${pat.id}`)).status, 204);
      assert.match(await closedEvent(stream, 'the end after revocation'), /revoked/);
      await stream.ended;
    });

    it('ends the stream when its access token is revoked (RFC 7009)', async () => {
      const { clientId, clientSecret, accessToken } = await clientCredentialsToken(server);
      const stream = await open({ token: accessToken });
      const revoked = await fetch(`${server.url}/api/v1/oauth2/revoke`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ token: accessToken, client_id: clientId, client_secret: clientSecret }),
      });
      assert.equal(revoked.status, 200);
      assert.match(await closedEvent(stream, 'the end after revocation'), /revoked/);
    });

    it('ends a console session stream when the session signs out', async () => {
      const { user, cookie, csrf } = await signedInViewer(server);
      const stream = await open({ cookie });
      const logout = await fetch(`${server.url}/api/v1/auth/logout`, {
        method: 'POST',
        headers: { cookie, 'x-csrf-token': csrf },
      });
      assert.ok(logout.status < 300, `logout: ${logout.status}`);
      assert.match(await closedEvent(stream, `the end of ${user.email}'s stream`), /session/);
    });

    // Last: it moves the clock past every access token's expiry.
    it('ends the stream when its access token expires', async () => {
      const { accessToken } = await clientCredentialsToken(server);
      const stream = await open({ token: accessToken });
      clock.advance(server.config.accessTokenTtl * 1000 + 1000);
      assert.match(await closedEvent(stream, 'the end at expiry'), /expired/);
    });
  });

  describe(`UNS live values: account changes end streams at once [${dialect}]`, () => {
    let server: TestServer;
    const streams: SseStream[] = [];

    before(async () => {
      // Periodic re-checks are far apart here: only the change announcements can end these streams.
      server = await startTestServer(dialect, { config: { unsStreamRecheck: 300 } });
    });
    after(async () => {
      for (const stream of streams) stream.close();
      await server?.close();
    });

    const openAs = async (token: string) => {
      const stream = await openSse(`${server.url}${STREAM}`, { token, org: server.orgId });
      assert.equal(stream.status, 200, JSON.stringify(stream.body));
      streams.push(stream);
      return stream;
    };

    it('ends the stream when the user is deactivated', async () => {
      const { user, client } = await signedInViewer(server);
      const pat = await createPat(client, ['uns:read']);
      const stream = await openAs(pat.token);
      const res = await server.admin.put(`/api/v1/admin/users/${user.id}/status`, { status: 'deactivated' });
      assert.equal(res.status, 200, res.text);
      assert.match(await closedEvent(stream, 'the end after deactivation'), /not active/);
    });

    it('ends the stream when the user leaves the organization', async () => {
      const { user, client } = await signedInViewer(server);
      const pat = await createPat(client, ['uns:read']);
      const stream = await openAs(pat.token);
      const res = await server.admin.delete(`/api/v1/organizations/${server.orgId}/members/${user.id}`);
      assert.equal(res.status, 204, res.text);
      assert.match(await closedEvent(stream, 'the end after leaving'), /member/);
    });
  });
}

/** A Viewer of the server's organization, signed in to the console. */
async function signedInViewer(server: TestServer) {
  const user = await buildUser(server);
  await addMember(server, server.orgId, user.id, 'Viewer');
  const login = await fetch(`${server.url}/api/v1/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email: user.email, password: user.password }),
  });
  assert.equal(login.status, 200);
  const cookie = (login.headers.get('set-cookie') ?? '').split(';')[0]!;
  const { data } = (await login.json()) as { data: { csrfToken: string } };
  const client = server.client.as({ cookie, csrfToken: data.csrfToken, org: server.orgId });
  return { user, client, cookie, csrf: data.csrfToken };
}
