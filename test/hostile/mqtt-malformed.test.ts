import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { connect as connectTcp, type Socket } from 'node:net';
import { after, before, describe, it } from 'node:test';
import mqtt, { type MqttClient } from 'mqtt';
import { testDialects } from '../helpers/dialects.js';
import { freePort } from '../helpers/free-port.js';
import type { TestClient } from '../helpers/http-client.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';
import { waitUntil } from '../helpers/wait.js';
import { createPat, unsCounts } from '../uns/uns-helpers.js';

// MQTT 3.1.1 packets built by hand (§2.2 fixed header, §1.5.3 UTF-8 strings), so that they can be wrong.
function remainingLength(n: number): Buffer {
  const bytes: number[] = [];
  do {
    let byte = n % 128;
    n = Math.floor(n / 128);
    if (n > 0) byte |= 0x80;
    bytes.push(byte);
  } while (n > 0);
  return Buffer.from(bytes);
}
const utf8String = (text: string) => {
  const bytes = Buffer.from(text);
  return Buffer.concat([Buffer.from([bytes.length >> 8, bytes.length & 0xff]), bytes]);
};
const packet = (firstByte: number, body: Buffer) =>
  Buffer.concat([Buffer.from([firstByte]), remainingLength(body.length), body]);
function connectPacket(fields: { protocol?: string; level?: number; username?: string; password?: string }) {
  const flags = 0x02 | (fields.username ? 0x80 : 0) | (fields.password ? 0x40 : 0);
  return packet(
    0x10,
    Buffer.concat([
      utf8String(fields.protocol ?? 'MQTT'),
      Buffer.from([fields.level ?? 4, flags, 0, 60]),
      utf8String(`raw-${randomBytes(4).toString('hex')}`),
      fields.username ? utf8String(fields.username) : Buffer.alloc(0),
      fields.password ? utf8String(fields.password) : Buffer.alloc(0),
    ]),
  );
}
const publishPacket = (topic: string, payload: string) =>
  packet(0x30, Buffer.concat([utf8String(topic), Buffer.from(payload)]));
const CONNACK_ACCEPTED = Buffer.from([0x20, 0x02, 0x00, 0x00]);

/** A raw TCP connection to the broker: what the broker sent, and whether it closed the connection. */
class RawConnection {
  received = Buffer.alloc(0);
  closed = false;
  private constructor(readonly socket: Socket) {
    socket.on('data', (chunk) => {
      this.received = Buffer.concat([this.received, chunk]);
    });
    socket.on('error', () => {});
    socket.on('close', () => {
      this.closed = true;
    });
  }

  static open(port: number): Promise<RawConnection> {
    return new Promise((resolve, reject) => {
      const socket = connectTcp(port, '127.0.0.1');
      socket.once('connect', () => resolve(new RawConnection(socket)));
      socket.once('error', reject);
    });
  }

  /** Resolves once the broker has closed the connection (this side never closes it first). */
  async closedByBroker(): Promise<void> {
    // The bound is far below aedes' 30 s connect timeout: the packet itself must end the connection.
    await waitUntil('the broker closes the connection', () => this.closed || null, 10_000);
  }
}

for (const dialect of testDialects()) {
  describe(`malformed and abusive MQTT clients, embedded broker [${dialect}]`, () => {
    let server: TestServer;
    let api: TestClient;
    let port: number;
    let token: string;
    let subscriber: MqttClient;
    let publisher: MqttClient;
    const goodDisconnects: string[] = [];
    // Values the good publisher had acknowledged (QoS 1: committed), and what the good subscriber received.
    const acknowledged: number[] = [];
    const received = new Set<number>();
    let publishing: Promise<void> | undefined;
    let stopPublishing = false;
    const offenders: MqttClient[] = [];

    const open = async (label: string) => {
      const client = await mqtt.connectAsync(`mqtt://127.0.0.1:${port}`, {
        username: server.orgId,
        password: token,
        reconnectPeriod: 0,
      });
      client.on('close', () => goodDisconnects.push(label));
      return client;
    };

    /** Resolves once the good publisher's values, published from now on, reach the good subscriber. */
    const goodTrafficFlows = async () => {
      const next = acknowledged.length + 3;
      await waitUntil('values published from now on reach the subscriber', () =>
        acknowledged.length >= next && received.has(acknowledged[next - 1]!) ? true : null,
      );
    };

    before(async () => {
      server = await startTestServer(dialect, { config: { mqttPort: await freePort() } });
      port = server.config.mqttPort;
      token = await createPat(server.admin, ['uns:publish', 'uns:read']);
      api = server.client.as({ token, org: server.orgId });
      subscriber = await open('subscriber');
      subscriber.on('message', (_topic, payload) => received.add(JSON.parse(payload.toString()).value));
      await subscriber.subscribeAsync('v1/good/#', { qos: 1 });
      publisher = await open('publisher');
      const baseMs = Date.now() - 3_600_000;
      publishing = (async () => {
        for (let n = 0; !stopPublishing; n++) {
          const envelope = { value: n, timestamp: new Date(baseMs + n).toISOString() };
          await publisher.publishAsync('v1/good/line/value', JSON.stringify(envelope), { qos: 1 });
          acknowledged.push(n);
        }
      })();
      await goodTrafficFlows();
    });
    after(async () => {
      stopPublishing = true;
      await publishing?.catch(() => {});
      for (const client of [subscriber, publisher, ...offenders]) client?.end(true);
      await server?.close();
    });

    const unauthenticated: [string, () => Buffer][] = [
      ['an HTTP request', () => Buffer.from(`GET / HTTP/1.1\r\nHost: x\r\n\r\n${'A'.repeat(100)}`)],
      ['zero bytes (reserved packet type 0)', () => Buffer.alloc(64)],
      ['a remaining length of five bytes', () => Buffer.from([0x10, 0x80, 0x80, 0x80, 0x80, 0x01, 0, 0])],
      ['a CONNECT with the protocol name "MQTX"', () => connectPacket({ protocol: 'MQTX' })],
      ['a CONNECT with protocol level 9', () => connectPacket({ level: 9 })],
      ['a PUBLISH before CONNECT', () => publishPacket('v1/offender/early/value', '1')],
      ['a CONNECT announcing 256 MiB', () => Buffer.from([0x10, 0xff, 0xff, 0xff, 0x7f, 0x00, 0x04])],
    ];
    for (const [what, bytes] of unauthenticated) {
      it(`disconnects a client that sends ${what}, and serves the others on`, async () => {
        const offender = await RawConnection.open(port);
        offender.socket.write(bytes());
        await offender.closedByBroker();
        assert.equal(offender.received.indexOf(CONNACK_ACCEPTED), -1, 'the offender was never accepted');
        await goodTrafficFlows();
      });
    }

    /** A raw connection past an accepted CONNECT with a valid token. */
    const authenticated = async () => {
      const connection = await RawConnection.open(port);
      connection.socket.write(connectPacket({ username: server.orgId, password: token }));
      await waitUntil('the broker accepts the CONNECT', () =>
        connection.received.subarray(0, 4).equals(CONNACK_ACCEPTED) ? true : null,
      );
      return connection;
    };

    it('disconnects an authenticated client as soon as a PUBLISH announces more than the largest packet', async () => {
      const offender = await authenticated();
      // The header alone: without a limit the broker would wait for (and buffer) 256 MiB.
      offender.socket.write(Buffer.from([0x30, 0xff, 0xff, 0xff, 0x7f, 0x00, 0x04]));
      await offender.closedByBroker();
      await goodTrafficFlows();
    });

    it('disconnects an authenticated client that sends a second CONNECT (MQTT-3.1.0-2)', async () => {
      const offender = await authenticated();
      offender.socket.write(connectPacket({ username: server.orgId, password: token }));
      await offender.closedByBroker();
      await goodTrafficFlows();
    });

    it('stores nothing of a PUBLISH cut short by its client, and serves the others on', async () => {
      const offender = await authenticated();
      const whole = publishPacket('v1/offender/truncated/value', '{"value":1}');
      offender.socket.end(whole.subarray(0, whole.length - 3));
      await waitUntil('the connection is closed', () => offender.closed || null);
      await goodTrafficFlows();
      assert.equal((await api.get('/api/v1/uns/topics/v1/offender/truncated/value')).status, 404);
    });

    for (const [what, payload] of [
      ['a value over 64 KiB', JSON.stringify('x'.repeat(70_000))],
      ['a payload of 1 MiB', JSON.stringify({ value: 'x'.repeat(1024 * 1024) })],
    ] as const) {
      it(`disconnects an authenticated client publishing ${what}`, async () => {
        const offender = await mqtt.connectAsync(`mqtt://127.0.0.1:${port}`, {
          username: server.orgId,
          password: token,
          reconnectPeriod: 0,
        });
        offenders.push(offender);
        offender.on('error', () => {});
        const closed = new Promise<void>((resolve) => offender.once('close', () => resolve()));
        offender.publish('v1/offender/big/value', payload, { qos: 1 });
        await closed;
        await goodTrafficFlows();
      });
    }

    it('kept the good clients connected and delivering, stayed healthy, and historized nothing of the offenders', async () => {
      stopPublishing = true;
      await publishing;
      assert.deepEqual(goodDisconnects, [], 'the good clients stayed connected throughout');
      const lost = await waitUntil('the subscriber has every acknowledged value', () => {
        const missing = acknowledged.filter((n) => !received.has(n));
        return missing.length === 0 ? missing : null;
      });
      assert.deepEqual(lost, []);
      assert.equal((await server.client.get('/healthz')).status, 200);
      assert.equal((await server.client.get('/readyz')).status, 200);
      const status = await waitUntil('the offenders are gone from the broker', async () => {
        const data = (await api.get('/api/v1/uns/broker')).body.data;
        return data.clients === 2 ? data : null;
      });
      assert.equal(status.state, 'listening');
      assert.deepEqual((await api.get('/api/v1/uns/topics?search=offender')).body.data, []);
      const counts = await unsCounts(server);
      assert.equal(
        counts.values,
        acknowledged.length,
        'the historian holds the good values and nothing else',
      );
      assert.equal(counts.violations, 0);
    });
  });
}
