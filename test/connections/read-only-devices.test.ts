import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import mqtt from 'mqtt';
import type { ProtocolDriver } from '../../src/modules/connections/drivers/driver.js';
import { protocolOf } from '../../src/modules/connections/protocols/protocol-registry.js';
import { EgressPolicy } from '../../src/platform/egress/egress-policy.js';
import { createChain, runOnce } from '../engine/pipeline-runner.js';
import { testDialects } from '../helpers/dialects.js';
import { freePort } from '../helpers/free-port.js';
import { type S7Plc, startS7Plc } from '../helpers/s7-plc.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';
import { ModbusTestServer } from './modbus-test-server.js';
import { OpcuaTestServer } from './opcua-test-server.js';

/** The Mosquitto every test machine runs (brief: 127.0.0.1:1883). */
const BROKER = process.env.MERIDIAN_TEST_MOSQUITTO_URL ?? 'mqtt://127.0.0.1:1883';

let modbus: ModbusTestServer;
let opcua: OpcuaTestServer;
let plc: S7Plc;
let plcPort: number;
let http: Server;
let httpPort: number;
/** Requests the HTTP server received, by method. */
const received: Record<string, number> = {};
let outside: mqtt.MqttClient;
const mqttBase = `meridian-test/read-only/${randomUUID()}`;

/**
 * The retained message of `topic` as the broker holds it: an outside client subscribes and then
 * publishes a marker; a retained message would arrive first (with the subscription), so the first
 * message tells whether there is one, with no waiting.
 */
async function retainedOf(topic: string): Promise<string | null> {
  const marker = `marker-${randomUUID()}`;
  const first = new Promise<string>((resolve) => {
    const onMessage = (t: string, payload: Buffer) => {
      if (t !== topic) return;
      outside.off('message', onMessage);
      resolve(payload.toString());
    };
    outside.on('message', onMessage);
  });
  await outside.subscribeAsync(topic, { qos: 1 });
  await outside.publishAsync(topic, marker, { qos: 1 });
  const message = await first;
  await outside.unsubscribeAsync(topic);
  return message === marker ? null : message;
}

/** One protocol's write functions and how to read back what they would change. */
interface Device {
  protocol: string;
  config: () => Record<string, unknown>;
  /** The write functions, writing values made of `n` (the control and the API tests write different ones). */
  writes: (n: number) => { type: string; config: Record<string, unknown> }[];
  /** What the writes would change, as the device holds it now. */
  state: () => Promise<unknown>;
}

const devices: Device[] = [
  {
    protocol: 'modbus-tcp',
    config: () => ({ host: '127.0.0.1', port: modbus.port, unitId: 1, timeoutMs: 2000 }),
    writes: (n) => [
      { type: 'modbus.writeCoil', config: { address: 5 + n, value: true } },
      { type: 'modbus.writeRegisters', config: { address: 6, value: 90 + n } },
    ],
    state: async () => [modbus.coils.slice(5, 8), modbus.holding[6]],
  },
  {
    protocol: 'opcua',
    config: () => ({ endpointUrl: opcua.endpointUrl, timeoutMs: 10000 }),
    writes: (n) => [
      { type: 'opcua.write', config: { nodeId: 'ns=1;s=Press4.Temperature', value: 90.5 + n } },
    ],
    state: async () => opcua.temperature,
  },
  {
    protocol: 's7',
    config: () => ({ host: '127.0.0.1', port: plcPort, rack: 0, slot: 1, timeoutMs: 3000 }),
    writes: (n) => [{ type: 's7.write', config: { address: 'DB1,INT4', value: 320 + n } }],
    state: async () => (await plc.db1()).toString('hex'),
  },
  {
    protocol: 'mqtt',
    config: () => ({ url: BROKER }),
    writes: (n) => [
      {
        type: 'mqtt.publish',
        config: { topic: `${mqttBase}/setpoint`, payload: { sp: n }, qos: 1, retain: true },
      },
    ],
    state: () => retainedOf(`${mqttBase}/setpoint`),
  },
  {
    protocol: 'rest',
    config: () => ({ baseUrl: `http://127.0.0.1:${httpPort}` }),
    writes: (n) =>
      ['POST', 'PUT', 'PATCH', 'DELETE'].map((method) => ({
        type: 'rest.request',
        config: { method, path: '/api/setpoint', body: { value: n } },
      })),
    state: async () => ({ ...received }),
  },
];

before(async () => {
  modbus = new ModbusTestServer(await freePort());
  await modbus.start();
  opcua = new OpcuaTestServer(await freePort());
  await opcua.start();
  plcPort = await freePort();
  const db1 = Buffer.alloc(64);
  db1.writeInt16BE(-12, 4);
  plc = await startS7Plc(plcPort, db1);
  httpPort = await freePort();
  http = createServer((req, res) => {
    received[req.method ?? '?'] = (received[req.method ?? '?'] ?? 0) + 1;
    req.resume();
    req.on('end', () => res.writeHead(204).end());
  });
  await new Promise<void>((resolve) => http.listen(httpPort, '127.0.0.1', resolve));
  outside = await mqtt.connectAsync(BROKER, { reconnectPeriod: 0 });
});
after(async () => {
  await modbus?.stop();
  await opcua?.stop();
  await plc?.kill();
  http?.close();
  await outside?.publishAsync(`${mqttBase}/setpoint`, '', { retain: true }).catch(() => {});
  await outside?.endAsync();
});

describe('every driver refuses its writes on a read-only session, where the write would leave', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'meridian-read-only-'));
  after(() => rmSync(dataDir, { recursive: true, force: true }));

  // The devices run on loopback, which the egress policy denies unless allowed.
  const loopbackEgress = new EgressPolicy({
    allow: ['127.0.0.1'],
    deny: [],
    ownPorts: () => [],
    backends: [],
  });
  const session = (driver: ProtocolDriver, config: Record<string, unknown>, readOnly: boolean) =>
    driver.connect(config, { onLost: () => {} }, { dataDir, readOnly, egress: loopbackEgress });

  for (const device of devices) {
    it(`${device.protocol}: refused read-only and the device unchanged; the same write goes through otherwise`, async () => {
      const { driver } = protocolOf(device.protocol);
      const readOnly = await session(driver, device.config(), true);
      try {
        const before = await device.state();
        for (const write of device.writes(1)) {
          await assert.rejects(
            readOnly.execute(write.type, write.config),
            /the connection is read-only: .* is refused/,
            write.type,
          );
        }
        assert.deepEqual(await device.state(), before, 'the device was written');
      } finally {
        await readOnly.close();
      }
      // The control: the same writes on a session that may write do change the device.
      const writable = await session(driver, device.config(), false);
      try {
        const before = await device.state();
        for (const write of device.writes(1)) await writable.execute(write.type, write.config);
        assert.notDeepEqual(await device.state(), before, 'the control write changed nothing');
      } finally {
        await writable.close();
      }
    });
  }

  it('rest: a read-only session still reads with GET', async () => {
    const readOnly = await session(protocolOf('rest').driver, devices[4]!.config(), true);
    try {
      const gets = received.GET ?? 0;
      const result = await readOnly.execute('rest.get', { path: '/api/status' });
      assert.equal(result.quality, 0);
      assert.equal(received.GET, gets + 1);
    } finally {
      await readOnly.close();
    }
  });
});

for (const dialect of testDialects()) {
  describe(`read-only connections refuse writes through the API and pipelines [${dialect}]`, () => {
    let server: TestServer;

    before(async () => {
      server = await startTestServer(dialect);
    });
    after(() => server?.close());

    for (const device of devices) {
      it(`${device.protocol}: an execute answers 409 and a pipeline fails; the device keeps its value`, async () => {
        const created = await server.admin.post('/api/v1/connections', {
          name: `Read-only ${device.protocol}`,
          protocol: device.protocol,
          readOnly: true,
          config: device.config(),
        });
        assert.equal(created.status, 201, created.text);
        const id = created.body.data.id as string;
        const before = await device.state();
        for (const [i, write] of device.writes(2).entries()) {
          const fn = await server.admin.post(`/api/v1/connections/${id}/functions`, {
            name: `write ${i}`,
            ...write,
          });
          assert.equal(fn.status, 201, fn.text);
          const executed = await server.admin.post(
            `/api/v1/connections/${id}/functions/${fn.body.data.id}/execute`,
            { confirmWrites: true },
          );
          assert.equal(executed.status, 409, executed.text);
          assert.match(executed.body.message, /read-only/);
          const pipeline = await createChain(server.admin, `Write ${device.protocol} ${i}`, [
            {
              id: 'write',
              type: 'connection.call',
              parameters: { connectionId: id, functionId: fn.body.data.id, confirmWrites: true },
            },
          ]);
          const { execution } = await runOnce(server.admin, pipeline, null);
          assert.equal(execution.status, 'failed');
          assert.equal(execution.error!.code, 'write_refused');
        }
        assert.deepEqual(await device.state(), before, 'the device was written');
      });
    }
  });
}
