import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import mqtt from 'mqtt';
import { testDialects } from '../helpers/dialects.js';
import type { TestClient } from '../helpers/http-client.js';
import { type PrivateMosquitto, startPrivateMosquitto } from '../helpers/private-mosquitto.js';
import { missingFromHistory, startPublishLoad } from '../helpers/publish-load.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';
import { waitUntil } from '../helpers/wait.js';
import { createPat } from '../uns/uns-helpers.js';

const BROKER = '/api/v1/uns/broker';
const BROKER_PASSWORD = `pw-${randomBytes(6).toString('hex')}`;

/**
 * The external broker (MQTT_URL) stopped under HTTP publish load: the broker status and /readyz say so,
 * HTTP publishes keep answering 200 and every one of them is historized (the historian does not depend
 * on the broker), and when the broker is back Meridian reconnects by itself and delivers again.
 * A Mosquitto of the suite's own, so that stopping it disturbs no other suite.
 */
for (const dialect of testDialects()) {
  describe(`external broker outage [${dialect}]`, () => {
    let mosquitto: PrivateMosquitto;
    let server: TestServer;
    let api: TestClient;
    let token: string;
    const namespace = `meridian-fault-${randomBytes(4).toString('hex')}`;
    const brokerState = async () => (await api.get(BROKER)).body.data;

    before(async () => {
      mosquitto = await startPrivateMosquitto();
      // Credentials in the URL, which no status may show (the broker takes any: allow_anonymous).
      const mqttUrl = mosquitto.url.replace('mqtt://', `mqtt://meridian:${BROKER_PASSWORD}@`);
      server = await startTestServer(dialect, { config: { mqttUrl, mqttNamespace: namespace } });
      token = await createPat(server.admin, ['uns:publish', 'uns:read']);
      api = server.client.as({ token, org: server.orgId });
      await waitUntil('the bridge is connected', async () =>
        (await brokerState()).state === 'connected' ? true : null,
      );
    });
    after(async () => {
      await server?.close().catch(() => {});
      await mosquitto?.destroy();
    });

    for (const signal of ['SIGKILL', 'SIGTERM'] as const) {
      it(`keeps publishing over HTTP while the broker is down (${signal}), reports it, and reconnects by itself`, {
        timeout: 180_000,
      }, async (t) => {
        const topicBase = `v1/outage/${signal.toLowerCase()}`;
        const load = startPublishLoad({
          baseUrl: server.url,
          token,
          org: server.orgId,
          topicBase,
          publishers: 4,
        });
        let duringOutage = 0;
        let reconnectMs = 0;
        try {
          await load.waitForAcknowledged(20);
          await mosquitto.stop(signal);
          const stoppedAt = Date.now();

          const down = await waitUntil('the broker status reports the broker disconnected', async () => {
            const status = await brokerState();
            return status.state === 'disconnected' ? status : null;
          });
          t.diagnostic(`status "disconnected" ${Date.now() - stoppedAt} ms after ${signal}: ${down.error}`);
          assert.equal(down.mode, 'external');
          assert.equal(typeof down.error, 'string');
          assert.ok(!JSON.stringify(down).includes(BROKER_PASSWORD), 'the status never shows the password');

          const ready = await server.client.get('/readyz');
          assert.equal(ready.status, 503);
          assert.deepEqual(Object.keys(ready.body).sort(), ['checks', 'error', 'message']);
          assert.equal(ready.body.error, 'unavailable');
          assert.equal(ready.body.checks.storage, 'ok');
          assert.match(ready.body.checks.broker, /^broker external is disconnected/);
          assert.ok(Number(ready.headers.get('retry-after')) >= 1, 'a 503 says when to retry');

          // Publishes keep being committed while the broker is still down.
          const atOutage = load.acknowledged.length;
          await load.waitForAcknowledged(atOutage + 500);
          assert.equal((await brokerState()).state, 'disconnected', 'the broker was down all along');
          duringOutage = load.acknowledged.length - atOutage;

          const restartedAt = Date.now();
          await mosquitto.start();
          await waitUntil('the bridge reconnects by itself', async () =>
            (await brokerState()).state === 'connected' ? true : null,
          );
          reconnectMs = Date.now() - restartedAt;
          const readyAgain = await server.client.get('/readyz');
          assert.equal(readyAgain.status, 200);
          assert.deepEqual(readyAgain.body, { status: 'ready', checks: { storage: 'ok', broker: 'ok' } });
        } finally {
          await load.stop();
        }
        t.diagnostic(
          `${load.acknowledged.length} values acknowledged, ${duringOutage} while the broker was down; ` +
            `reconnected ${reconnectMs} ms after the broker restarted`,
        );

        const statuses = new Set(load.outcomes.map((o) => (o.kind === 'answered' ? o.status : o.kind)));
        assert.deepEqual([...statuses], [200], 'every HTTP publish was answered 200');
        assert.deepEqual(
          await missingFromHistory(api, load.acknowledged),
          [],
          'every value answered 200 is stored',
        );

        // After the reconnect an HTTP publish reaches subscribers of the organization's namespace again.
        const subscriber = await mqtt.connectAsync(mosquitto.url, { reconnectPeriod: 0 });
        try {
          const topic = `${topicBase}/after/value`;
          const wire = `${namespace}/${server.orgId}/${topic}`;
          await subscriber.subscribeAsync(`${namespace}/${server.orgId}/${topicBase}/after/#`, { qos: 1 });
          let received: string | undefined;
          subscriber.on('message', (name, payload) => {
            if (name === wire) received = payload.toString();
          });
          const res = await api.post('/api/v1/uns/data/publish', { topic, value: 'back', quality: 1 });
          assert.equal(res.status, 200);
          const envelope = JSON.parse(await waitUntil('the subscriber receives the value', () => received));
          assert.equal(envelope.value, 'back');
          assert.equal(envelope.quality, 1);
        } finally {
          await subscriber.endAsync(true);
        }
      });
    }
  });
}
