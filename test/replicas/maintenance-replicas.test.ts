import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { readEventStream, type StreamEvent } from '../../web/src/api/event-stream.js';
import type { TestClient } from '../helpers/http-client.js';
import {
  CLUSTER_ADMIN_PASSWORD,
  eventually,
  type ReplicaCluster,
  startReplicaCluster,
} from './replica-cluster.js';

const MAINTENANCE = '/api/v1/organizations/settings/maintenance';

/** Maintenance mode and settings switched on one replica are in force on the other within one second. */
describe('maintenance mode across replicas [postgres]', () => {
  let cluster: ReplicaCluster;
  let a: TestClient;
  let b: TestClient;

  before(async () => {
    cluster = await startReplicaCluster(2);
    const [first, second] = cluster.replicas;
    const signedIn = await first!.client.login('admin@localhost', CLUSTER_ADMIN_PASSWORD);
    const orgId = (await signedIn.get('/api/v1/auth/session')).body.data.organizations[0].id;
    a = signedIn.inOrg(orgId);
    b = (await second!.client.login('admin@localhost', CLUSTER_ADMIN_PASSWORD)).inOrg(orgId);
  });
  after(() => cluster?.stop());

  it('a switch made on one replica is in force on the other within one second, and its console hears of it', async () => {
    // The other replica has the state cached before the switch.
    assert.equal((await b.get(MAINTENANCE)).body.data.enabled, false);
    const controller = new AbortController();
    const response = await fetch(`${b.baseUrl}/api/v1/organizations/settings/events`, {
      headers: { cookie: (b as any).credential.cookie, 'x-organization-id': (b as any).credential.org },
      signal: controller.signal,
    });
    assert.equal(response.status, 200);
    const events = readEventStream(response.body!);
    const next = async () => JSON.parse(((await events.next()).value as StreamEvent).data);
    assert.equal((await next()).enabled, false);

    const on = await a.post(MAINTENANCE, { enabled: true, reason: 'cluster maintenance' });
    assert.equal(on.status, 200, on.text);
    const took = await eventually(async () =>
      assert.equal((await b.get(MAINTENANCE)).body.data.enabled, true),
    );
    assert.ok(took <= 1000, `in force on the other replica after ${took} ms`);
    const heard = await next();
    assert.equal(heard.enabled, true);
    assert.equal(heard.reason, 'cluster maintenance');

    assert.equal((await a.post(MAINTENANCE, { enabled: false, reason: 'done' })).status, 200);
    await eventually(async () => assert.equal((await b.get(MAINTENANCE)).body.data.enabled, false));
    assert.equal((await next()).enabled, false);
    controller.abort();
    await events.return(undefined).catch(() => {});
  });

  it('a settings change made on one replica is read on the other within one second', async () => {
    const { version } = (await b.get('/api/v1/organizations/settings')).body.data;
    const res = await a.patch('/api/v1/organizations/settings', { version, timezone: 'Asia/Tokyo' });
    assert.equal(res.status, 200, res.text);
    await eventually(async () =>
      assert.equal((await b.get('/api/v1/organizations/settings')).body.data.timezone, 'Asia/Tokyo'),
    );
  });
});
