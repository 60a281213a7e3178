/**
 * Sparkplug B wills on an external broker (bridge mode, MQTT_URL): two replicas on one PostgreSQL and
 * the Mosquitto on 127.0.0.1:1883, `MERIDIAN_SPARKPLUG_LEASE` 6 s. The `sparkplug-host` lease holder
 * gives the organization's primary host and its edge node MQTT clients of their own whose wills are the
 * offline STATE and the NDEATH, so that a replica killed with SIGKILL is reported dead by the broker.
 * Checked by a host application written from the spec with Eclipse Tahu's codec (`sparkplug-payload`):
 * - tck-id-message-flow-edge-node-birth-publish-will-message(-payload-bdSeq): the NDEATH the broker
 *   publishes for a killed replica carries the bdSeq of its NBIRTH (tck-id-payloads-nbirth-bdseq-repeat);
 * - tck-id-host-topic-phid-death-required, -death-retain, -death-payload: the offline STATE is the will,
 *   retained, `{online:false, timestamp}`, its timestamp the online STATE's;
 * - the replica that takes the lease over births the edge node again and says the host online.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import mqtt, { type MqttClient } from 'mqtt';
import { decodePayload, type UPayload } from 'sparkplug-payload/lib/sparkplugbpayload.js';
import { testDialects } from '../helpers/dialects.js';
import type { TestClient } from '../helpers/http-client.js';
import { waitUntil } from '../helpers/wait.js';
import { CLUSTER_ADMIN_PASSWORD, type ReplicaCluster, startReplicaCluster } from './replica-cluster.js';

interface Heard {
  topic: string;
  retain: boolean;
  state?: { online: boolean; timestamp: number };
  payload?: UPayload;
}

const EDGE = {
  groupId: 'Meridian',
  edgeNodeId: 'UNS',
  devices: [{ deviceId: 'Line1', prefix: 'v1/edge/line1' }],
};

describe('Sparkplug B wills on an external broker: STATE and NDEATH when a replica is killed [postgres]', {
  skip: !testDialects().includes('postgres'),
}, () => {
  let cluster: ReplicaCluster;
  let clients: TestClient[];
  let orgId: string;
  let root: string;
  const watchers: MqttClient[] = [];

  before(async () => {
    cluster = await startReplicaCluster(2, { MERIDIAN_SPARKPLUG_LEASE: '6' });
    const [first, second] = cluster.replicas;
    const a = await first!.client.login('admin@localhost', CLUSTER_ADMIN_PASSWORD);
    orgId = (await a.get('/api/v1/auth/session')).body.data.organizations[0].id;
    const b = await second!.client.login('admin@localhost', CLUSTER_ADMIN_PASSWORD);
    clients = [a.inOrg(orgId), b.inOrg(orgId)];
    root = `${cluster.env.MERIDIAN_MQTT_NAMESPACE}/${orgId}/spBv1.0`;
  });
  after(async () => {
    for (const w of watchers) w.end(true);
    await cluster?.stop();
  });

  /** A host application of the organization: every Sparkplug message under its namespace, decoded. */
  const watch = async (): Promise<Heard[]> => {
    const watcher = await mqtt.connectAsync('mqtt://127.0.0.1:1883', { reconnectPeriod: 0 });
    watchers.push(watcher);
    const heard: Heard[] = [];
    watcher.on('message', (topic, payload, packet) => {
      const rest = topic.slice(root.length + 1);
      if (rest.startsWith('STATE/'))
        heard.push({ topic: rest, retain: packet.retain, state: JSON.parse(payload.toString()) });
      else heard.push({ topic: rest, retain: packet.retain, payload: decodePayload(payload) });
    });
    await watcher.subscribeAsync(`${root}/#`, { qos: 1 });
    return heard;
  };
  const owners = () => cluster.replicas.map((r) => /sparkplug host lease taken/.test(r.process.output()));
  const bdSeqOf = (payload: UPayload) => Number(payload.metrics!.find((m) => m.name === 'bdSeq')!.value);
  const next = (heard: Heard[], from: number, topic: string, what = topic) =>
    waitUntil(what, () => heard.slice(from).find((h) => h.topic === topic) ?? null, 40_000);
  const publish = async (i: number, value: number) => {
    const res = await clients[i]!.post('/api/v1/uns/data/publish', { topic: 'v1/edge/line1/temp', value });
    assert.ok(res.status >= 200 && res.status < 300, res.text);
  };

  it('a killed lease holder leaves the NDEATH of its birth and the offline STATE to the broker; the other replica births again, and when it is killed too the retained STATE is offline', async () => {
    const heard = await watch();
    await publish(0, 20);
    const { version } = (await clients[0]!.get('/api/v1/organizations/settings')).body.data;
    const patched = await clients[0]!.patch('/api/v1/organizations/settings', {
      version,
      sparkplug: { edgeNode: EDGE },
    });
    assert.equal(patched.status, 200, patched.text);

    const owner = await waitUntil('one replica holds the lease', () => {
      const held = owners();
      return held.filter(Boolean).length === 1 ? held.indexOf(true) : null;
    });
    const other = 1 - owner;
    const online = await waitUntil(
      'the STATE online',
      () => heard.find((h) => h.state?.online) ?? null,
      40_000,
    );
    const nbirth = await next(heard, 0, 'Meridian/NBIRTH/UNS', 'the NBIRTH');
    const bdSeq = bdSeqOf(nbirth.payload!);
    const dbirth = await next(heard, 0, 'Meridian/DBIRTH/UNS/Line1', 'the DBIRTH');
    assert.deepEqual(
      dbirth.payload!.metrics!.map((m) => [m.name, m.value]),
      [['temp', 20]],
    );

    // A value committed on the replica that is not the host goes out as DDATA all the same.
    const beforeData = heard.length;
    await publish(other, 21);
    const ddata = await next(heard, beforeData, 'Meridian/DDATA/UNS/Line1', 'the DDATA');
    assert.equal(ddata.payload!.metrics![0]!.value, 21);

    // SIGKILL: nothing said by Meridian; the broker publishes the wills.
    const beforeKill = heard.length;
    const lastOnline = heard.filter((h) => h.state?.online).at(-1)!;
    cluster.replicas[owner]!.process.child.kill('SIGKILL');
    await cluster.replicas[owner]!.process.exited;
    const ndeath = await next(heard, beforeKill, 'Meridian/NDEATH/UNS', 'the NDEATH will');
    assert.equal(bdSeqOf(ndeath.payload!), bdSeq, 'the will carries the bdSeq of the birth');
    const offline = await waitUntil(
      'the offline STATE will',
      () => heard.slice(beforeKill).find((h) => h.state?.online === false) ?? null,
    ).catch((error: Error) => {
      const states = heard.map((h) => `${h.topic} ${JSON.stringify(h.state ?? null)}`).join('\n');
      const logs = cluster.replicas.map((r) =>
        r.process
          .output()
          .split('\n')
          .filter((l) => /sparkplug/.test(l))
          .join('\n'),
      );
      throw new Error(`${error.message}\n${states}\n${logs.join('\n---\n')}`);
    });
    assert.equal(offline.topic, online.topic);
    assert.equal(offline.state!.timestamp, lastOnline.state!.timestamp, 'the will has the birth timestamp');

    // The other replica takes the lease: STATE online, a new birth.
    await waitUntil('the other replica takes the lease', () => (owners()[other] ? true : null), 40_000);
    const reborn = await next(heard, beforeKill, 'Meridian/NBIRTH/UNS', 'the NBIRTH after the takeover');
    const secondBdSeq = bdSeqOf(reborn.payload!);
    const online2 = await waitUntil(
      'the STATE online again',
      () => heard.slice(beforeKill).find((h) => h.state?.online) ?? null,
    );
    assert.ok(online2.state!.timestamp > online.state!.timestamp);

    // The last replica is killed: the wills again, and the STATE left retained is offline.
    const beforeLast = heard.length;
    const lastOnline2 = heard.filter((h) => h.state?.online).at(-1)!;
    cluster.replicas[other]!.process.child.kill('SIGKILL');
    await cluster.replicas[other]!.process.exited;
    const lastDeath = await next(heard, beforeLast, 'Meridian/NDEATH/UNS', 'the last NDEATH will');
    assert.equal(bdSeqOf(lastDeath.payload!), secondBdSeq);
    const late = await watch();
    const retained = await waitUntil('the retained STATE', () => late.find((h) => h.state) ?? null);
    assert.equal(retained.retain, true);
    assert.deepEqual(retained.state, { online: false, timestamp: lastOnline2.state!.timestamp });
  });
});
