import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { testDialects } from './helpers/dialects.js';
import { addMember, buildOrganization, buildUser } from './helpers/factories.js';
import type { TestClient } from './helpers/http-client.js';
import { startTestServer, type TestServer } from './helpers/test-server.js';
import { clientCredentials, registerClient } from './oauth2/oauth2-helpers.js';
import { openSse, type SseStream } from './uns/sse-client.js';

const EVENTS = '/api/v1/organizations/settings/events';
const MAINTENANCE = '/api/v1/organizations/settings/maintenance';

/** A clock the test can move forward; everything else reads the system time through it. */
function movableClock() {
  let offsetMs = 0;
  return { now: () => Date.now() + offsetMs, advance: (ms: number) => (offsetMs += ms) };
}

async function createPat(client: TestClient, scopes: string[]) {
  const res = await client.post('/api/v1/oauth2/tokens', {
    name: `events-${Date.now()}`,
    scopes,
    expiresInDays: 30,
  });
  assert.equal(res.status, 201, res.text);
  return res.body.data as { id: string; token: string };
}

/** A Viewer of `orgId`, signed in to the console. */
async function signedInViewer(server: TestServer, orgId = server.orgId) {
  const user = await buildUser(server);
  await addMember(server, orgId, user.id, 'Viewer');
  const login = await fetch(`${server.url}/api/v1/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email: user.email, password: user.password }),
  });
  assert.equal(login.status, 200);
  const cookie = (login.headers.get('set-cookie') ?? '').split(';')[0]!;
  const { data } = (await login.json()) as { data: { csrfToken: string } };
  const client = server.client.as({ cookie, csrfToken: data.csrfToken, org: orgId });
  return { user, client, cookie, csrf: data.csrfToken };
}

const closedEvent = (stream: SseStream, what: string) =>
  stream
    .next((frame) => frame.event === 'closed', what)
    .then((frame) => JSON.parse(frame.data).message as string);

for (const dialect of testDialects()) {
  describe(`Organization event stream: it does not outlive its credential [${dialect}]`, () => {
    let server: TestServer;
    const clock = movableClock();
    const streams: SseStream[] = [];
    const open = async (credential: { token?: string; cookie?: string }, org = server.orgId) => {
      const stream = await openSse(`${server.url}${EVENTS}`, { ...credential, org });
      assert.equal(stream.status, 200, JSON.stringify(stream.body));
      streams.push(stream);
      await stream.next((frame) => frame.event === 'maintenance', 'the state at once');
      return stream;
    };

    before(async () => {
      // Re-checked every second: a stream ends within a second of any change even without an announcement.
      server = await startTestServer(dialect, { clock, config: { unsStreamRecheck: 1 } });
    });
    after(async () => {
      for (const stream of streams) stream.close();
      await server?.close();
    });

    it('keeps a stream open while its credential stays valid', async () => {
      const { cookie } = await signedInViewer(server);
      const stream = await open({ cookie });
      await new Promise((resolve) => setTimeout(resolve, 2500));
      assert.equal(
        (await server.admin.post(MAINTENANCE, { enabled: true, reason: 'still there' })).status,
        200,
      );
      const frame = await stream.next(
        (f) => f.event === 'maintenance' && JSON.parse(f.data).enabled === true,
        'the switch after two re-checks',
      );
      assert.equal(JSON.parse(frame.data).reason, 'still there');
      assert.ok(!stream.frames.some((f) => f.event === 'closed'));
      assert.equal((await server.admin.post(MAINTENANCE, { enabled: false, reason: 'done' })).status, 200);
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
      await stream.ended;
    });

    it('ends the stream when its personal access token is revoked', async () => {
      const pat = await createPat(server.admin, ['organizations:read']);
      const stream = await open({ token: pat.token });
      assert.equal((await server.admin.delete(`/api/v1/oauth2/tokens/${pat.id}`)).status, 204);
      assert.match(await closedEvent(stream, 'the end after revocation'), /revoked/);
      await stream.ended;
    });

    it('ends the stream when the organization is suspended', async () => {
      const org = await buildOrganization(server, `Events suspended ${dialect}`);
      const { cookie } = await signedInViewer(server, org);
      const stream = await open({ cookie }, org);
      assert.equal((await server.admin.post(`/api/v1/organizations/${org}/suspend`)).status, 200);
      assert.match(await closedEvent(stream, 'the end after suspension'), /suspended/);
    });

    // Last: it moves the clock past every access token's expiry.
    it('ends the stream when its access token expires', async () => {
      const client = await registerClient(server, {
        name: `Events reader ${Date.now()}`,
        grantTypes: ['client_credentials'],
        redirectUris: [],
        allowedScopes: ['organizations:read'],
      });
      const issued = await clientCredentials(server, client, 'organizations:read');
      assert.equal(issued.status, 200, JSON.stringify(issued.body));
      const stream = await open({ token: issued.body.access_token as string });
      clock.advance(server.config.accessTokenTtl * 1000 + 1000);
      assert.match(await closedEvent(stream, 'the end at expiry'), /expired/);
    });
  });

  describe(`Organization event stream: account changes end it at once [${dialect}]`, () => {
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
      const stream = await openSse(`${server.url}${EVENTS}`, { token, org: server.orgId });
      assert.equal(stream.status, 200, JSON.stringify(stream.body));
      streams.push(stream);
      return stream;
    };

    it('ends the stream when the user is deactivated', async () => {
      const { user, client } = await signedInViewer(server);
      const stream = await openAs((await createPat(client, ['organizations:read'])).token);
      const res = await server.admin.put(`/api/v1/admin/users/${user.id}/status`, { status: 'deactivated' });
      assert.equal(res.status, 200, res.text);
      assert.match(await closedEvent(stream, 'the end after deactivation'), /not active/);
    });

    it('ends the stream when the user leaves the organization', async () => {
      const { user, client } = await signedInViewer(server);
      const stream = await openAs((await createPat(client, ['organizations:read'])).token);
      const res = await server.admin.delete(`/api/v1/organizations/${server.orgId}/members/${user.id}`);
      assert.equal(res.status, 204, res.text);
      assert.match(await closedEvent(stream, 'the end after leaving'), /member/);
    });
  });
}
