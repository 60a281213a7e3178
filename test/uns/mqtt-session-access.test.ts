import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import mqtt, { type MqttClient } from 'mqtt';
import { testDialects } from '../helpers/dialects.js';
import { addMember, buildOrganization, buildUser } from '../helpers/factories.js';
import { freePort } from '../helpers/free-port.js';
import type { TestClient } from '../helpers/http-client.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';
import { clientCredentials, registerClient } from '../oauth2/oauth2-helpers.js';

/** Within this long of losing access, an MQTT connection is closed (issue 25). */
const DEADLINE_MS = 5000;

/** A clock the test can move forward; everything else reads the system time through it. */
function movableClock() {
  let offsetMs = 0;
  return { now: () => Date.now() + offsetMs, advance: (ms: number) => (offsetMs += ms) };
}

interface Watched {
  client: MqttClient;
  /** Messages received, with when. */
  received: { topic: string; at: number }[];
  /** Resolves with the time the connection closed. */
  closed: Promise<number>;
}

async function connectWatched(url: string, org: string, token: string, filter: string): Promise<Watched> {
  const client = await mqtt.connectAsync(url, {
    username: org,
    password: token,
    reconnectPeriod: 0,
    connectTimeout: 5000,
  });
  client.on('error', () => {});
  const received: Watched['received'] = [];
  client.on('message', (topic) => received.push({ topic, at: Date.now() }));
  const closed = new Promise<number>((resolve) => client.once('close', () => resolve(Date.now())));
  const granted = await client.subscribeAsync(filter, { qos: 0 });
  assert.equal(granted[0]?.qos, 0, 'subscription granted');
  return { client, received, closed };
}

async function createPat(client: TestClient, scopes: string[]) {
  const res = await client.post('/api/v1/oauth2/tokens', {
    name: `mqtt-${Date.now()}`,
    scopes,
    expiresInDays: 30,
  });
  assert.equal(res.status, 201, res.text);
  return res.body.data as { id: string; token: string };
}

const within = <T>(promise: Promise<T>, ms: number, what: string) =>
  Promise.race([
    promise,
    new Promise<never>((_, reject) =>
      setTimeout(() => reject(new Error(`${what}: not within ${ms} ms`)), ms),
    ),
  ]);

for (const dialect of testDialects()) {
  describe(`UNS MQTT: a connection does not outlive its access [${dialect}]`, () => {
    let server: TestServer;
    let url: string;
    const clock = movableClock();
    const clients: MqttClient[] = [];

    before(async () => {
      // The default re-check interval: the deadline holds as shipped.
      server = await startTestServer(dialect, { clock, config: { mqttPort: await freePort() } });
      url = `mqtt://127.0.0.1:${server.config.mqttPort}`;
    });
    after(async () => {
      for (const client of clients) client.end(true);
      await server?.close();
    });

    /** A member of `org` with a PAT, connected and subscribed to the case's topics; delivery proven. */
    async function memberConnected(org: string, role: 'Viewer' | 'Editor', topic: string) {
      const user = await buildUser(server);
      await addMember(server, org, user.id, role);
      const client = await server.client.login(user.email, user.password, org);
      const pat = await createPat(client, role === 'Viewer' ? ['uns:read'] : ['uns:read', 'uns:publish']);
      const watched = await connectWatched(url, org, pat.token, `${topic}/#`);
      clients.push(watched.client);
      await publishAndSee(org, watched, `${topic}/before`);
      return { user, pat, client, watched };
    }

    const publish = (org: string, topic: string) =>
      server.admin.inOrg(org).post('/api/v1/uns/data/publish', { topic, value: 1 });

    async function publishAndSee(org: string, watched: Watched, topic: string) {
      assert.equal((await publish(org, topic)).status, 200);
      for (let i = 0; i < 100 && !watched.received.some((m) => m.topic === topic); i++) {
        await new Promise((r) => setTimeout(r, 20));
      }
      assert.ok(
        watched.received.some((m) => m.topic === topic),
        `${topic} delivered while access lasts`,
      );
    }

    /** The connection closes within the deadline; after it nothing is delivered and it cannot come back. */
    async function assertCut(org: string, watched: Watched, token: string, since: number, topic: string) {
      const closedAt = await within(watched.closed, DEADLINE_MS, 'connection closed');
      assert.ok(closedAt - since < DEADLINE_MS, `closed after ${closedAt - since} ms`);
      const count = watched.received.length;
      assert.equal((await publish(org, `${topic}/after`)).status, 200);
      await new Promise((r) => setTimeout(r, 200));
      assert.equal(watched.received.length, count, 'nothing delivered after the close');
      await assert.rejects(
        mqtt.connectAsync(url, { username: org, password: token, reconnectPeriod: 0, connectTimeout: 3000 }),
        'the credential no longer connects',
      );
    }

    it('closes the connection when its personal access token is revoked', async () => {
      const { pat, client, watched } = await memberConnected(server.orgId, 'Editor', 'v1/sess/revoked');
      const since = Date.now();
      assert.equal((await client.delete(`/api/v1/oauth2/tokens/${pat.id}`)).status, 204);
      await assertCut(server.orgId, watched, pat.token, since, 'v1/sess/revoked');
    });

    it('closes the connection when its user is deactivated', async () => {
      const { user, pat, watched } = await memberConnected(server.orgId, 'Viewer', 'v1/sess/deactivated');
      const since = Date.now();
      const res = await server.admin.put(`/api/v1/admin/users/${user.id}/status`, { status: 'deactivated' });
      assert.equal(res.status, 200, res.text);
      await assertCut(server.orgId, watched, pat.token, since, 'v1/sess/deactivated');
    });

    it('closes the connection when its user is removed from the organization', async () => {
      const { user, pat, watched } = await memberConnected(server.orgId, 'Viewer', 'v1/sess/removed');
      const since = Date.now();
      const res = await server.admin.delete(`/api/v1/organizations/${server.orgId}/members/${user.id}`);
      assert.equal(res.status, 204, res.text);
      await assertCut(server.orgId, watched, pat.token, since, 'v1/sess/removed');
    });

    it('closes the connection when its organization is suspended', async () => {
      const org = await buildOrganization(server);
      const { pat, watched } = await memberConnected(org, 'Editor', 'v1/sess/suspended');
      const since = Date.now();
      const res = await server.admin.post(`/api/v1/organizations/${org}/suspend`, {});
      assert.equal(res.status, 200, res.text);
      const closedAt = await within(watched.closed, DEADLINE_MS, 'connection closed');
      assert.ok(closedAt - since < DEADLINE_MS);
      await assert.rejects(
        mqtt.connectAsync(url, {
          username: org,
          password: pat.token,
          reconnectPeriod: 0,
          connectTimeout: 3000,
        }),
      );
    });

    it('keeps a connection open while its credential stays valid, and applies a role change', async () => {
      const { user, watched } = await memberConnected(server.orgId, 'Editor', 'v1/sess/kept');
      await new Promise((r) => setTimeout(r, 2500)); // past a re-check
      await publishAndSee(server.orgId, watched, 'v1/sess/kept/later');
      // Demoted to Viewer: publishing is refused (the broker disconnects the publisher), nothing stored.
      await addMember(server, server.orgId, user.id, 'Viewer');
      await new Promise((r) => setTimeout(r, 300));
      watched.client.publish('v1/sess/kept/by-viewer', '1', { qos: 1 });
      await within(watched.closed, DEADLINE_MS, 'publisher disconnected');
      await server.app.uns.writer.settle();
      const latest = await server.admin.get('/api/v1/uns/data/latest?topic=v1/sess/kept/by-viewer');
      assert.equal(latest.body.data ?? null, null, 'the Viewer publish was not committed');
    });

    // Last: it moves the clock past every access token's expiry.
    it('closes the connection when its access token expires', async () => {
      const registered = await registerClient(server, {
        name: `mqtt expiry ${Date.now()}`,
        grantTypes: ['client_credentials'],
        redirectUris: [],
        allowedScopes: ['uns:read'],
      });
      const issued = await clientCredentials(server, registered, 'uns:read');
      assert.equal(issued.status, 200, JSON.stringify(issued.body));
      const token = issued.body.access_token as string;
      const watched = await connectWatched(url, server.orgId, token, 'v1/sess/expired/#');
      clients.push(watched.client);
      await publishAndSee(server.orgId, watched, 'v1/sess/expired/before');
      clock.advance(server.config.accessTokenTtl * 1000 + 1000);
      await assertCut(server.orgId, watched, token, Date.now(), 'v1/sess/expired');
    });
  });

  describe(`UNS MQTT: between the loss of access and the close, nothing passes [${dialect}]`, () => {
    let server: TestServer;
    let url: string;
    const clock = movableClock();
    const clients: MqttClient[] = [];

    before(async () => {
      // Re-checks far apart: only the per-message expiry check can stop these deliveries.
      server = await startTestServer(dialect, {
        clock,
        config: { mqttPort: await freePort(), mqttSessionRecheck: 300 },
      });
      url = `mqtt://127.0.0.1:${server.config.mqttPort}`;
    });
    after(async () => {
      for (const client of clients) client.end(true);
      await server?.close();
    });

    it('delivers nothing to, and commits nothing from, a connection whose token has expired', async () => {
      const registered = await registerClient(server, {
        name: `mqtt between ${Date.now()}`,
        grantTypes: ['client_credentials'],
        redirectUris: [],
        allowedScopes: ['uns:read', 'uns:publish'],
      });
      const issued = await clientCredentials(server, registered, 'uns:read uns:publish');
      assert.equal(issued.status, 200, JSON.stringify(issued.body));
      const watched = await connectWatched(url, server.orgId, issued.body.access_token, 'v1/between/#');
      clients.push(watched.client);
      const publish = (topic: string) => server.admin.post('/api/v1/uns/data/publish', { topic, value: 1 });
      assert.equal((await publish('v1/between/before')).status, 200);
      for (let i = 0; i < 100 && watched.received.length === 0; i++)
        await new Promise((r) => setTimeout(r, 20));
      assert.equal(watched.received.length, 1, 'delivered before expiry');

      clock.advance(server.config.accessTokenTtl * 1000 + 1000);
      assert.equal((await publish('v1/between/after')).status, 200);
      await new Promise((r) => setTimeout(r, 300));
      assert.deepEqual(
        watched.received.map((m) => m.topic),
        ['v1/between/before'],
        'nothing delivered after expiry',
      );
      watched.client.publish('v1/between/from-expired', '1', { qos: 1 });
      await within(watched.closed, DEADLINE_MS, 'the expired publisher is disconnected');
      await server.app.uns.writer.settle();
      const latest = await server.admin.get('/api/v1/uns/data/latest?topic=v1/between/from-expired');
      assert.equal(latest.body.data ?? null, null, 'the expired publish was not committed');
    });
  });
}
