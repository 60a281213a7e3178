import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import mqtt from 'mqtt';
import { createTestDatabase, type TestDatabase } from '../helpers/dialects.js';
import { freePort } from '../helpers/free-port.js';
import { type MeridianProcess, runMeridian, serveEnv } from '../helpers/process.js';

// Issue 40 point 4: the embedded broker speaks MQTT 3.1.1; an MQTT 5 client is refused with its reason
// code, and the log says which client and what to do.
describe('an MQTT 5.0 client at the embedded broker', () => {
  let database: TestDatabase;
  let meridian: MeridianProcess;
  let url: string;

  before(async () => {
    database = await createTestDatabase('sqlite');
    const mqttPort = await freePort();
    meridian = runMeridian(['serve'], {
      ...serveEnv(database, await freePort(), {
        email: 'admin@example.com',
        password: 'mqtt-version-admin-pw',
      }),
      MERIDIAN_MQTT_PORT: String(mqttPort),
    });
    await meridian.waitFor(/Meridian ready/, 60_000);
    url = `mqtt://127.0.0.1:${mqttPort}`;
  });
  after(async () => {
    meridian?.child.kill('SIGTERM');
    await meridian?.exited;
    await database?.drop();
  });

  it('is refused with CONNACK 0x84 (unsupported protocol version) and a log line naming it', async () => {
    const refused = await mqtt
      .connectAsync(url, {
        protocolVersion: 5,
        clientId: 'mqttx-line4-dashboard',
        username: '00000000-0000-0000-0000-000000000000',
        password: 'irrelevant',
        reconnectPeriod: 0,
        connectTimeout: 5000,
      })
      .then(
        (client) => {
          client.end(true);
          return null;
        },
        (error: Error & { code?: number }) => error,
      );
    assert.ok(refused, 'the MQTT 5 connection was accepted');
    assert.equal(refused.code, 0x84, refused.message);
    await meridian.waitFor(/speaks MQTT 5\.0/, 5000);
    const line = meridian
      .output()
      .split('\n')
      .find((l) => l.includes('speaks MQTT 5.0'))!;
    assert.equal(JSON.parse(line).level, 40, 'a warning');
    assert.match(line, /"mqttx-line4-dashboard"/);
    assert.match(line, /MQTT 3\.1\.1/);
    assert.match(line, /MQTT_URL/);
  });

  it('accepts the same client on MQTT 3.1.1 as far as authentication (a bad token is refused as such)', async () => {
    const error = await mqtt
      .connectAsync(url, {
        protocolVersion: 4,
        clientId: 'mqttx-line4-dashboard',
        username: '00000000-0000-0000-0000-000000000000',
        password: 'irrelevant',
        reconnectPeriod: 0,
        connectTimeout: 5000,
      })
      .then(
        (client) => {
          client.end(true);
          return null;
        },
        (e: Error & { code?: number }) => e,
      );
    assert.ok(error);
    assert.notEqual(error.code, 0x84);
  });
});
