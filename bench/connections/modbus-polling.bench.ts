/**
 * Modbus polling rate: Meridian's Modbus TCP session (driver, register decoding, metrics: the path a
 * polled read takes) against modbus-serial alone, each reading one float32 in a loop for the same time
 * from the same ServerTCP, which runs in a process of its own.
 *   node --import tsx bench/connections/modbus-polling.bench.ts [seconds]
 */
import modbusSerial from 'modbus-serial';
import { modbusTcpDriver } from '../../src/modules/connections/drivers/modbus/modbus-tcp.driver.js';
import { runOn } from '../../src/modules/connections/runtime/connection-worker.js';
import { MetricsRecorder } from '../../src/modules/connections/runtime/runtime-metrics.js';
import { EgressPolicy } from '../../src/platform/egress/egress-policy.js';
import { freePort } from '../../test/helpers/free-port.js';
import { spawnServerProcess } from '../server-process.js';

const ModbusRTU = ((modbusSerial as unknown as { default?: unknown }).default ??
  modbusSerial) as typeof modbusSerial.default;
const seconds = Number(process.argv[2] ?? 10);
const port = await freePort();
const sim = await spawnServerProcess<{ port: number }>('bench/connections/modbus-sim.ts', [String(port)]);

async function forSeconds(read: () => Promise<unknown>): Promise<number> {
  const end = Date.now() + seconds * 1000;
  let reads = 0;
  while (Date.now() < end) {
    await read();
    reads++;
  }
  return reads / seconds;
}

async function baseline(): Promise<number> {
  const client = new ModbusRTU();
  await client.connectTCP('127.0.0.1', { port });
  client.setID(1);
  client.setTimeout(3000);
  await forSeconds(() => client.readHoldingRegisters(0, 2)); // warm-up
  const rate = await forSeconds(async () => {
    const r = await client.readHoldingRegisters(0, 2);
    return Buffer.from([r.data[0]! >> 8, r.data[0]! & 255, r.data[1]! >> 8, r.data[1]! & 255]).readFloatBE(0);
  });
  await new Promise<void>((resolve) => client.close(() => resolve()));
  return rate;
}

async function meridian(): Promise<number> {
  const session = await modbusTcpDriver.connect(
    { host: '127.0.0.1', port },
    { onLost: () => {} },
    // The simulator is on loopback, which the egress policy denies unless allowed.
    {
      dataDir: '/tmp',
      readOnly: true,
      egress: new EgressPolicy({ allow: ['127.0.0.1'], deny: [], ownPorts: () => [], backends: [] }),
    },
  );
  const metrics = new MetricsRecorder();
  const config = { address: 0, dataType: 'float32', byteOrder: 'ABCD' };
  await forSeconds(() => runOn(session, 'modbus.readHoldingRegisters', config, metrics));
  const rate = await forSeconds(async () => {
    const result = await runOn(session, 'modbus.readHoldingRegisters', config, metrics);
    if (!result.success) throw new Error(result.error);
  });
  await session.close();
  return rate;
}

try {
  const base = await baseline();
  const ours = await meridian();
  console.log(`modbus-serial alone: ${base.toFixed(0)} reads/s`);
  console.log(`Meridian session:    ${ours.toFixed(0)} reads/s`);
  console.log(`ratio (Meridian / modbus-serial alone): ${(ours / base).toFixed(3)}x`);
} finally {
  await sim.stop();
}
