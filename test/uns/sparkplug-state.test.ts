/**
 * Meridian as each organization's Sparkplug B primary host: the retained `spBv1.0/STATE/<host id>` the
 * embedded broker announces in the organization's namespace, and the organization setting that names it.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import mqtt, { type MqttClient } from 'mqtt';
import { testDialects } from '../helpers/dialects.js';
import { addMember, buildOrganization, buildUser } from '../helpers/factories.js';
import { waitUntil } from '../helpers/wait.js';
import { type MqttTestServer, startMqttTestServer } from './mqtt-test-server.js';
import { createPat } from './uns-helpers.js';

const SETTINGS = '/api/v1/organizations/settings';

interface StateMessage {
  topic: string;
  online: boolean;
  timestamp: number;
  retain: boolean;
}

/** Every STATE message a client receives, its payload read as the spec's JSON. */
function states(client: MqttClient): StateMessage[] {
  const seen: StateMessage[] = [];
  client.on('message', (topic, payload, packet) => {
    const body = JSON.parse(payload.toString('utf8')) as { online: boolean; timestamp: number };
    seen.push({ topic, online: body.online, timestamp: body.timestamp, retain: packet.retain });
  });
  return seen;
}

for (const dialect of testDialects()) {
  describe(`Sparkplug B primary host STATE [${dialect}]`, () => {
    let mqttServer: MqttTestServer;

    before(async () => {
      mqttServer = await startMqttTestServer(dialect);
    });
    after(() => mqttServer?.close());

    it('announces spBv1.0/STATE/meridian retained, {online: true, timestamp} (tck-id-operational-behavior-host-application-connect-birth-payload, -retained)', async () => {
      const before = Date.now();
      const client = await mqttServer.open();
      const seen = states(client);
      await client.subscribeAsync('spBv1.0/STATE/+', { qos: 1 });
      // The first client may subscribe before the announcement its connection started: then it is
      // delivered live. A client subscribing after gets it from the broker's retained store.
      const [first] = await waitUntil('the STATE', async () => (seen.length > 0 ? seen : null));
      assert.equal(first!.topic, 'spBv1.0/STATE/meridian');
      const later = await mqttServer.open();
      const laterSeen = states(later);
      await later.subscribeAsync('spBv1.0/STATE/+', { qos: 1 });
      const [state] = await waitUntil('the retained STATE', async () =>
        laterSeen.length > 0 ? laterSeen : null,
      );
      assert.equal(state!.topic, 'spBv1.0/STATE/meridian');
      assert.equal(state!.online, true);
      assert.equal(state!.retain, true, 'delivered as a retained message');
      assert.ok(state!.timestamp >= before - 5000 && state!.timestamp <= Date.now(), 'a UTC time in ms');
    });

    it('a new host id in the organization settings announces the old one offline and the new one online; a host id with / is refused', async () => {
      const client = await mqttServer.open();
      const seen = states(client);
      await client.subscribeAsync('spBv1.0/STATE/+', { qos: 1 });
      await waitUntil('the retained STATE', async () => (seen.length > 0 ? true : null));
      const settings = (await mqttServer.server.admin.get(SETTINGS)).body.data;
      assert.deepEqual(settings.sparkplug, { hostId: 'meridian', edgeNode: null });
      const refused = await mqttServer.server.admin.patch(SETTINGS, {
        version: settings.version,
        sparkplug: { hostId: 'plant/host' },
      });
      assert.equal(refused.status, 400, refused.text);
      assert.match(refused.text, /hostId/);
      const changed = await mqttServer.server.admin.patch(SETTINGS, {
        version: settings.version,
        sparkplug: { hostId: 'PlantHost' },
      });
      assert.equal(changed.status, 200, changed.text);
      await waitUntil('the new host announced', async () =>
        seen.some((m) => m.topic === 'spBv1.0/STATE/PlantHost' && m.online) ? true : null,
      );
      assert.ok(
        seen.some((m) => m.topic === 'spBv1.0/STATE/meridian' && !m.online),
        'the old id went offline',
      );
      // A client that subscribes now gets both, retained: the new host online, the old offline.
      const late = await mqttServer.open();
      const lateSeen = states(late);
      await late.subscribeAsync('spBv1.0/STATE/+', { qos: 1 });
      await waitUntil('both retained', async () => (lateSeen.length >= 2 ? true : null));
      assert.deepEqual(Object.fromEntries(lateSeen.map((m) => [m.topic, m.online])), {
        'spBv1.0/STATE/PlantHost': true,
        'spBv1.0/STATE/meridian': false,
      });
    });

    it('refuses a client publishing the organization own STATE (only Meridian speaks for its host)', async () => {
      const settings = (await mqttServer.server.admin.get(SETTINGS)).body.data;
      const hostId = settings.sparkplug.hostId as string;
      const client = await mqttServer.open();
      // Not awaited: the broker answers a refused publish by closing the connection, never with a PUBACK.
      client.publish(`spBv1.0/STATE/${hostId}`, JSON.stringify({ online: false, timestamp: Date.now() }), {
        qos: 1,
        retain: true,
      });
      await waitUntil('the client is disconnected', async () => (client.connected ? null : true));
      const check = await mqttServer.open();
      const seen = states(check);
      await check.subscribeAsync(`spBv1.0/STATE/${hostId}`, { qos: 1 });
      await waitUntil('the retained STATE', async () => (seen.length > 0 ? true : null));
      assert.equal(seen[0]!.online, true, 'still online');
    });

    it("another organization has its own STATE, apart from this one's", async () => {
      const server = mqttServer.server;
      const otherOrg = await buildOrganization(server);
      const user = await buildUser(server);
      await addMember(server, otherOrg, user.id, 'Owner');
      const client = await server.client.login(user.email, user.password, otherOrg);
      const settings = (await client.get(SETTINGS)).body.data;
      assert.equal(
        (await client.patch(SETTINGS, { version: settings.version, sparkplug: { hostId: 'OtherHost' } }))
          .status,
        200,
      );
      const token = await createPat(client, ['uns:publish', 'uns:read']);
      const other = await mqtt.connectAsync(mqttServer.url, {
        username: otherOrg,
        password: token,
        reconnectPeriod: 0,
      });
      try {
        const seen = states(other);
        await other.subscribeAsync('spBv1.0/STATE/+', { qos: 1 });
        await waitUntil('its STATE', async () => (seen.length > 0 ? true : null));
        await new Promise((r) => setTimeout(r, 200));
        assert.deepEqual(
          seen.map((m) => [m.topic, m.online]),
          [['spBv1.0/STATE/OtherHost', true]],
          'only its own host, none of the first organization',
        );
      } finally {
        other.end(true);
      }
    });
  });
}
