import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import mqtt from 'mqtt';
import { testDialects } from '../helpers/dialects.js';
import type { TestClient } from '../helpers/http-client.js';
import { startPrivateMosquitto } from '../helpers/private-mosquitto.js';
import {
  CLUSTER_ADMIN_PASSWORD,
  eventually,
  type ReplicaCluster,
  startReplicaCluster,
} from './replica-cluster.js';

/**
 * Two replicas on one PostgreSQL and the external Mosquitto. Changes made on one take effect on the
 * other within one second (DESIGN "Runtime shape"; README "Scaling out" says how: LISTEN/NOTIFY).
 */
describe('replicas on PostgreSQL and an external broker [postgres]', {
  skip: !testDialects().includes('postgres'),
}, () => {
  let cluster: ReplicaCluster;
  let a: TestClient;
  let b: TestClient;
  let orgId: string;

  async function clientCredentialsToken(on: TestClient, clientId: string, clientSecret: string) {
    const res = await fetch(`${on.baseUrl}/api/v1/oauth2/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'client_credentials',
        client_id: clientId,
        client_secret: clientSecret,
        scope: 'organizations:read uns:read uns:publish',
      }),
    });
    return {
      status: res.status,
      body: (await res.json()) as { access_token: string; scope?: string; error?: string },
    };
  }

  async function registerClient(on: TestClient, fields: Record<string, unknown> = {}) {
    const res = await on.post('/api/v1/oauth2/clients', {
      name: `Replica test ${Date.now()}`,
      clientType: 'confidential',
      grantTypes: ['client_credentials'],
      allowedScopes: ['organizations:read', 'uns:read', 'uns:publish'],
      ...fields,
    });
    assert.equal(res.status, 201, res.text);
    return res.body.data as { id: string; clientId: string; clientSecret: string };
  }

  const status = (client: TestClient, token: string) =>
    client.get('/api/v1/organizations', { token, org: orgId }).then((r) => r.status);

  before(async () => {
    cluster = await startReplicaCluster(2);
    const [first, second] = cluster.replicas;
    a = await first!.client.login('admin@localhost', CLUSTER_ADMIN_PASSWORD);
    orgId = (await a.get('/api/v1/auth/session')).body.data.organizations[0].id;
    a = a.inOrg(orgId);
    b = second!.client;
  });
  after(() => cluster?.stop());

  it('accepts on one replica a token issued by the other', async () => {
    const client = await registerClient(a);
    const token = await clientCredentialsToken(a, client.clientId, client.clientSecret);
    assert.equal(token.status, 200);
    assert.equal(await status(b, token.body.access_token), 200);
  });

  it('honours a revocation made on one replica on the other within one second', async () => {
    const client = await registerClient(a);
    const { body } = await clientCredentialsToken(b, client.clientId, client.clientSecret);
    assert.equal(await status(b, body.access_token), 200);
    const revoked = await fetch(`${a.baseUrl}/api/v1/oauth2/revoke`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        token: body.access_token,
        client_id: client.clientId,
        client_secret: client.clientSecret,
      }),
    });
    assert.equal(revoked.status, 200);
    const took = await eventually(async () => assert.equal(await status(b, body.access_token), 401));
    console.log(`revocation reached the other replica in ${took} ms`);
  });

  it("refuses tokens to a client disabled on the other replica, and refuses a deleted client's tokens within one second", async () => {
    const client = await registerClient(a);
    const { body } = await clientCredentialsToken(a, client.clientId, client.clientSecret);
    // b has looked the client up (and cached it) before the disable reaches it over the bus.
    assert.equal((await clientCredentialsToken(b, client.clientId, client.clientSecret)).status, 200);
    assert.equal((await a.post(`/api/v1/oauth2/clients/${client.id}/disable`)).status, 200);
    const took = await eventually(async () => {
      const refused = await clientCredentialsToken(b, client.clientId, client.clientSecret);
      assert.equal(refused.status, 401);
      assert.equal(refused.body.error, 'invalid_client');
    });
    console.log(`a client disable reached the other replica in ${took} ms`);
    assert.equal(await status(b, body.access_token), 200, 'an issued token of a disabled client stays valid');
    assert.equal((await a.delete(`/api/v1/oauth2/clients/${client.id}`)).status, 204);
    await eventually(async () => assert.equal(await status(b, body.access_token), 401));
  });

  it('honours a user deactivated on one replica on the other within one second', async () => {
    const created = await a.post('/api/v1/admin/users', {
      email: 'replica-user@example.com',
      displayName: 'R',
      password: 'replica-password-1',
    });
    const userId = created.body.data.id as string;
    assert.equal(
      (await a.put(`/api/v1/organizations/${orgId}/members/${userId}`, { role: 'Viewer' })).status,
      204,
    );
    const user = await b.login('replica-user@example.com', 'replica-password-1', orgId);
    const pat = await user.post('/api/v1/oauth2/tokens', {
      name: 'replica',
      scopes: ['organizations:read'],
      expiresInDays: 30,
    });
    assert.equal(pat.status, 201, pat.text);
    const value = pat.body.data.token as string;
    assert.equal(await status(b, value), 200);
    assert.equal(
      (await a.put(`/api/v1/admin/users/${userId}/status`, { status: 'deactivated' })).status,
      200,
    );
    await eventually(async () => assert.equal(await status(b, value), 401));
  });

  it('issues on one replica a token cut to a role lowered on the other within one second', async () => {
    const created = await a.post('/api/v1/admin/users', {
      email: 'replica-acting@example.com',
      displayName: 'Acting',
      password: 'replica-password-2',
    });
    const userId = created.body.data.id as string;
    const member = (role: string) => a.put(`/api/v1/organizations/${orgId}/members/${userId}`, { role });
    assert.equal((await member('Editor')).status, 204);
    const client = await registerClient(a, { actingUserId: userId });
    // b has issued (and cached what the user can hold) before the change reaches it over the bus.
    const issued = await clientCredentialsToken(b, client.clientId, client.clientSecret);
    assert.equal(issued.body.scope, 'organizations:read uns:read uns:publish');
    assert.equal((await member('Viewer')).status, 204);
    const took = await eventually(async () => {
      const cut = await clientCredentialsToken(b, client.clientId, client.clientSecret);
      assert.equal(cut.body.scope, 'organizations:read uns:read');
    });
    console.log(`a lowered role reached the other replica's token endpoint in ${took} ms`);
  });

  it('delivers a value published over HTTP on one replica to an MQTT subscriber and to the historian once', async () => {
    const topic = `v1/replicas/line${Date.now()}/temperature`;
    const subscriber = await mqtt.connectAsync('mqtt://127.0.0.1:1883', { protocolVersion: 5 });
    const received: string[] = [];
    subscriber.on('message', (_t, payload) => received.push(payload.toString()));
    await subscriber.subscribeAsync(`${cluster.env.MERIDIAN_MQTT_NAMESPACE}/${orgId}/${topic}`);
    try {
      const published = await a.post('/api/v1/uns/data/publish', {
        topic,
        value: 21.5,
        timestamp: new Date(Date.now() - 60_000).toISOString(),
      });
      assert.equal(published.status, 200, published.text);
      await eventually(async () => assert.equal(received.length, 1), 2000);
      const bAsAdmin = await b.login('admin@localhost', CLUSTER_ADMIN_PASSWORD, orgId);
      // Give a duplicate time to appear before counting.
      await new Promise((r) => setTimeout(r, 500));
      const history = await bAsAdmin.get(`/api/v1/uns/data/history?topic=${encodeURIComponent(topic)}`);
      assert.equal(history.status, 200, history.text);
      assert.equal(history.body.data.length, 1, 'stored once');
      assert.equal(received.length, 1, 'delivered once');
    } finally {
      await subscriber.endAsync();
    }
  });

  it('shares signing keys, and a rotation made through one is honoured by both', async () => {
    const client = await registerClient(a);
    const before = await clientCredentialsToken(a, client.clientId, client.clientSecret);
    const jwksBefore = (await (await fetch(`${b.baseUrl}/.well-known/jwks.json`)).json()) as {
      keys: { kid: string }[];
    };
    const rotated = cluster.run(['keys', 'rotate']);
    assert.equal(await rotated.exited, 0, rotated.output());
    await eventually(async () => {
      const after = await clientCredentialsToken(a, client.clientId, client.clientSecret);
      const kid = JSON.parse(Buffer.from(after.body.access_token.split('.')[0]!, 'base64url').toString())
        .kid as string;
      assert.ok(!jwksBefore.keys.some((k) => k.kid === kid), 'a new key signs');
      assert.equal(await status(b, after.body.access_token), 200, 'the other replica verifies it');
    }, 2000);
    assert.equal(
      await status(b, before.body.access_token),
      200,
      'tokens signed with the retiring key stay valid',
    );
  });

  describe('UNS caches', () => {
    const PUBLISH = '/api/v1/uns/data/publish';
    let adminB: TestClient;

    before(async () => {
      adminB = await b.login('admin@localhost', CLUSTER_ADMIN_PASSWORD, orgId);
    });

    it('enforces on one replica a schema binding created on the other within one second', async () => {
      const topic = `v1/replicas/bound${Date.now()}/level`;
      // B reads (and caches) the organization's bindings: none yet.
      assert.equal((await adminB.post(PUBLISH, { topic, value: 11 })).status, 200);
      const schema = await a.post('/api/v1/uns/topics/schemas', {
        name: `level-${Date.now()}`,
        definition: { jsonSchema: { type: 'number' }, minimum: 0, maximum: 10 },
      });
      assert.equal(schema.status, 201, schema.text);
      const bound = await a.post('/api/v1/uns/topics/schema-bindings', {
        filter: topic,
        schema: schema.body.data.name,
        mode: 'strict',
      });
      assert.equal(bound.status, 201, bound.text);
      const took = await eventually(async () => {
        assert.equal((await adminB.post(PUBLISH, { topic, value: 11 })).status, 400);
      });
      console.log(`binding reached the other replica in ${took} ms`);
      assert.equal((await a.delete(`/api/v1/uns/topics/schema-bindings/${bound.body.data.id}`)).status, 204);
      await eventually(async () => {
        assert.equal((await adminB.post(PUBLISH, { topic, value: 11 })).status, 200);
      });
    });

    it('creates anew on one replica a topic deleted on the other, instead of writing to its old id', async () => {
      const root = `v1/replicas/deleted${Date.now()}`;
      const topic = `${root}/speed`;
      // B caches the topic's id.
      assert.equal((await adminB.post(PUBLISH, { topic, value: 1 })).status, 200);
      assert.equal((await a.delete(`/api/v1/uns/topics/${root}?recursive=true`)).status, 200);
      await eventually(async () => {
        assert.equal((await adminB.post(PUBLISH, { topic, value: 2 })).status, 200);
        const view = await a.get(`/api/v1/uns/topics/${topic}`);
        assert.equal(view.status, 200, 'the node exists again');
        assert.equal(view.body.data.latest?.value, 2);
        // B's reads resolve the topic from its writer's ids: the new one, not the deleted one's.
        const latest = await adminB.get(`/api/v1/uns/data/latest?topic=${topic}`);
        assert.equal(latest.status, 200);
        assert.equal(latest.body.data.value, 2);
      });
    });

    it('applies a retention and a broker changed on one replica on the other within one second', async () => {
      const second = await startPrivateMosquitto();
      try {
        const put = await a.put('/api/v1/system/uns/settings', {
          retentionDays: 90,
          broker: { mode: 'external', mqttUrl: second.url },
        });
        assert.equal(put.status, 200, put.text);
        const took = await eventually(async () => {
          const settings = (await adminB.get('/api/v1/system/uns/settings')).body.data;
          assert.equal(settings.retentionDays, 90);
          assert.equal(settings.broker.mqttUrl, second.url);
          const broker = (await adminB.get('/api/v1/uns/broker')).body.data;
          assert.equal(broker.address, second.url);
          assert.equal(broker.state, 'connected');
        });
        console.log(`settings reached the other replica in ${took} ms`);
        // B's HTTP publishes now reach subscribers of the new broker.
        const topic = `v1/replicas/moved${Date.now()}/value`;
        const subscriber = await mqtt.connectAsync(second.url, { protocolVersion: 5 });
        try {
          const received: string[] = [];
          subscriber.on('message', (_t, payload) => received.push(payload.toString()));
          await subscriber.subscribeAsync(`${cluster.env.MERIDIAN_MQTT_NAMESPACE}/${orgId}/${topic}`);
          assert.equal((await adminB.post(PUBLISH, { topic, value: 7 })).status, 200);
          await eventually(async () => assert.equal(received.length, 1), 2000);
          assert.equal(JSON.parse(received[0]!).value, 7);
        } finally {
          await subscriber.endAsync();
        }
      } finally {
        // Back to the shared broker on both, for whatever runs next.
        const back = await a.put('/api/v1/system/uns/settings', {
          broker: { mode: 'external', mqttUrl: cluster.env.MQTT_URL! },
        });
        assert.equal(back.status, 200, back.text);
        await eventually(async () => {
          const broker = (await adminB.get('/api/v1/uns/broker')).body.data;
          assert.equal(broker.address, cluster.env.MQTT_URL);
          assert.equal(broker.state, 'connected');
        }, 2000);
        await second.destroy();
      }
    });
  });
});
