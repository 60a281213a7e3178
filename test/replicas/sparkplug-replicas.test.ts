/**
 * Sparkplug B on an external broker (bridge mode, MQTT_URL): two replicas on one PostgreSQL and the
 * Mosquitto on 127.0.0.1:1883, a unique namespace per run. One replica holds the `sparkplug-host` lease
 * and only it takes the edge nodes' streams (a shared subscription would split a node's messages and
 * break its seq tracking); when it is killed the other takes over, and the first data it sees of the
 * node makes it ask for a rebirth. The edge node is Eclipse Tahu's `sparkplug-client`, publishing under
 * the organization's namespace (`<namespace>/<org id>/spBv1.0/...`, what a mount point makes of
 * `spBv1.0/...`).
 * - tck-id-operational-behavior-host-application-connect-birth: the host publishes its STATE online.
 * - tck-id-operational-behavior-host-reordering-rebirth: a host without the node's birth asks for one.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import mqtt, { type MqttClient } from 'mqtt';
import sparkplug from 'sparkplug-client';
import type { UMetric, UPayload } from 'sparkplug-payload/lib/sparkplugbpayload.js';
import { testDialects } from '../helpers/dialects.js';
import type { TestClient } from '../helpers/http-client.js';
import { waitUntil } from '../helpers/wait.js';
import { CLUSTER_ADMIN_PASSWORD, type ReplicaCluster, startReplicaCluster } from './replica-cluster.js';

type EdgeNode = ReturnType<typeof sparkplug.newClient>;

describe('Sparkplug B host on an external broker, one replica by lease [postgres]', {
  skip: !testDialects().includes('postgres'),
}, () => {
  let cluster: ReplicaCluster;
  let clients: TestClient[];
  let orgId: string;
  let namespace: string;
  let edge: EdgeNode | undefined;
  let watcher: MqttClient | undefined;

  before(async () => {
    cluster = await startReplicaCluster(2);
    namespace = cluster.env.MERIDIAN_MQTT_NAMESPACE!;
    const [first, second] = cluster.replicas;
    const a = await first!.client.login('admin@localhost', CLUSTER_ADMIN_PASSWORD);
    orgId = (await a.get('/api/v1/auth/session')).body.data.organizations[0].id;
    const b = await second!.client.login('admin@localhost', CLUSTER_ADMIN_PASSWORD);
    clients = [a.inOrg(orgId), b.inOrg(orgId)];
  });
  after(async () => {
    try {
      edge?.stop();
    } catch {}
    watcher?.end(true);
    await cluster?.stop();
  });

  const owners = () => cluster.replicas.map((r) => /sparkplug host lease taken/.test(r.process.output()));
  const nodesOn = async (i: number) =>
    ((await clients[i]!.get('/api/v1/uns/sparkplug/nodes')).body.data ?? []) as {
      groupId: string;
      online: boolean;
      seqErrors: number;
    }[];
  const latest = async (i: number, topic: string) =>
    ((await clients[i]!.get(`/api/v1/uns/data/latest?topic=${encodeURIComponent(topic)}`)).body.data ??
      null) as { value: unknown } | null;
  const historyOn = async (i: number, topic: string, from: number) => {
    const res = await clients[i]!.get(
      `/api/v1/uns/data/history?topic=${encodeURIComponent(topic)}&from=${new Date(from).toISOString()}&to=${new Date(Date.now() + 1000).toISOString()}`,
    );
    return (res.body.data as { value: unknown }[]).map((v) => v.value);
  };

  it('one replica takes the stream (births and data once, STATE online), and when it is killed the other takes over and asks the node for a rebirth', async () => {
    const owner = await waitUntil(
      'one replica holds the sparkplug host lease',
      () => {
        const held = owners();
        return held.filter(Boolean).length === 1 ? held.indexOf(true) : null;
      },
      30_000,
    );
    const other = 1 - owner;
    // STATE: the owner announces the organization's primary host, retained, under its namespace.
    watcher = await mqtt.connectAsync('mqtt://127.0.0.1:1883', { reconnectPeriod: 0 });
    const states: { online: boolean; timestamp: number }[] = [];
    watcher.on('message', (_topic, payload) => states.push(JSON.parse(payload.toString())));
    await watcher.subscribeAsync(`${namespace}/${orgId}/spBv1.0/STATE/meridian`);
    await waitUntil('the retained STATE online', () => (states.at(-1)?.online ? true : null));

    const version = `${namespace}/${orgId}/spBv1.0`;
    const rebirthRequests: UPayload[] = [];
    let births = 0;
    edge = sparkplug.newClient({
      serverUrl: 'mqtt://127.0.0.1:1883',
      // Mosquitto here lets anyone in; Tahu's client requires the properties.
      username: 'edge',
      password: 'edge',
      groupId: 'BridgePlant',
      edgeNode: 'Edge1',
      clientId: `bridge-edge-${Math.random().toString(16).slice(2)}`,
      version,
      mqttOptions: { reconnectPeriod: 500 },
    } as Parameters<typeof sparkplug.newClient>[0]);
    const node = edge;
    const birth = () => {
      births += 1;
      node.publishNodeBirth({
        timestamp: Date.now(),
        metrics: [{ name: 'Flow', alias: 1, type: 'Double', value: 100 + births }] as UMetric[],
      });
    };
    node.on('birth', () => {
      if (births === 0) birth();
    });
    // Under a namespace Tahu's client reports commands as plain messages.
    node.on('message', (topic: string, payload: UPayload) => {
      if (topic !== `${version}/BridgePlant/NCMD/Edge1`) return;
      if (payload.metrics?.some((m) => m.name === 'Node Control/Rebirth' && m.value === true)) {
        rebirthRequests.push(payload);
        birth();
      }
    });
    node.on('error', () => {});
    const started = Date.now() - 1000;
    const data = (value: number) =>
      node.publishNodeData({
        timestamp: Date.now(),
        metrics: [{ alias: 1, type: 'Double', value }] as UMetric[],
      });

    const topic = 'v1/BridgePlant/Edge1/Flow';
    await waitUntil(
      'the birth is in the UNS',
      async () => ((await latest(other, topic))?.value === 101 ? true : null),
      30_000,
    );
    for (let i = 1; i <= 5; i++) {
      data(i);
      await new Promise((r) => setTimeout(r, 20));
    }
    await waitUntil('the data is in the UNS', async () =>
      (await latest(other, topic))?.value === 5 ? true : null,
    );
    assert.deepEqual(await historyOn(other, topic, started), [101, 1, 2, 3, 4, 5]);
    // Only the owner runs the host: the node is its, with no sequence error (nothing split or doubled).
    const ownerNodes = await nodesOn(owner);
    assert.deepEqual(
      ownerNodes.map((n) => [n.groupId, n.online, n.seqErrors]),
      [['BridgePlant', true, 0]],
    );
    assert.deepEqual(await nodesOn(other), [], 'the other replica does not take the stream');
    assert.equal(rebirthRequests.length, 0);

    // The owner dies without a word; the other replica takes the lease once it runs out.
    const statesBefore = states.length;
    cluster.replicas[owner]!.process.child.kill('SIGKILL');
    await cluster.replicas[owner]!.process.exited;
    await waitUntil('the other replica takes the lease', () => (owners()[other] ? true : null), 40_000);
    await waitUntil('the new host announces STATE online', () =>
      states.length > statesBefore && states.at(-1)!.online ? true : null,
    );
    // It has no session of the node: its first data asks for a rebirth, which the node answers.
    data(6);
    await waitUntil('the edge node received NCMD Node Control/Rebirth', () =>
      rebirthRequests.length > 0 ? true : null,
    );
    await waitUntil('the rebirth is in the UNS', async () =>
      (await latest(other, topic))?.value === 102 ? true : null,
    );
    data(7);
    await waitUntil('data after the takeover', async () =>
      (await latest(other, topic))?.value === 7 ? true : null,
    );
    const view = await nodesOn(other);
    assert.deepEqual(
      view.map((n) => [n.groupId, n.online]),
      [['BridgePlant', true]],
    );
  });
});
