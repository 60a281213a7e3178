/**
 * Modbus block reads: N holding-register functions (default 1,000, one uint16 each, addresses 0 to N-1)
 * polled every second by a Meridian connection into the UNS (SQLite historian), against a modbus-serial
 * loop that reads the same registers every second in 125-register blocks. For each: the requests a
 * second the device saw and the values a second (Meridian: committed into the UNS; the loop: decoded).
 * The device runs in a process of its own and counts the requests; both runs measure the same window.
 *   node --import tsx bench/connections/modbus-blocks.bench.ts [functions] [seconds]
 */
import { loadavg } from 'node:os';
import modbusSerial from 'modbus-serial';
import { freePort } from '../../test/helpers/free-port.js';
import { startTestServer } from '../../test/helpers/test-server.js';
import { spawnServerProcess } from '../server-process.js';

const ModbusRTU = ((modbusSerial as unknown as { default?: unknown }).default ??
  modbusSerial) as typeof modbusSerial.default;
const functions = Number(process.argv[2] ?? 1000);
const seconds = Number(process.argv[3] ?? 20);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const load = () =>
  loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');

const port = await freePort();
const sim = await spawnServerProcess<{ port: number }>('bench/connections/modbus-block-sim.ts', [
  String(functions),
  String(port),
]);

/** The device's count of read requests (registers 60000-60001 of the simulator). */
const counter = new ModbusRTU();
await counter.connectTCP('127.0.0.1', { port });
counter.setID(1);
async function deviceRequests(): Promise<number> {
  const { data } = await counter.readHoldingRegisters(60000, 2);
  return data[0]! * 65536 + data[1]!;
}

/** Requests a second the device saw and values a second, over the window. */
interface Rates {
  requests: number;
  values: number;
}

async function baseline(): Promise<Rates> {
  const client = new ModbusRTU();
  await client.connectTCP('127.0.0.1', { port });
  client.setID(1);
  client.setTimeout(3000);
  let values = 0;
  let busy = false;
  const poll = async () => {
    if (busy) return;
    busy = true;
    try {
      for (let start = 0; start < functions; start += 125) {
        const { data } = await client.readHoldingRegisters(start, Math.min(125, functions - start));
        for (const word of data) if (Number.isFinite(word)) values++;
      }
    } finally {
      busy = false;
    }
  };
  const timer = setInterval(() => void poll(), 1000);
  await sleep(3000);
  const before = { values, requests: await deviceRequests() };
  await sleep(seconds * 1000);
  const after = { values, requests: await deviceRequests() };
  clearInterval(timer);
  while (busy) await sleep(10);
  await new Promise<void>((resolve) => client.close(() => resolve()));
  return {
    requests: (after.requests - before.requests) / seconds,
    values: (after.values - before.values) / seconds,
  };
}

async function meridian(): Promise<Rates & { errors: number }> {
  const server = await startTestServer('sqlite');
  const admin = server.admin;
  const created = await admin.post('/api/v1/connections', {
    name: 'bench',
    protocol: 'modbus-tcp',
    config: { host: '127.0.0.1', port, unitId: 1 },
  });
  const id = created.body.data.id;
  for (let i = 0; i < functions; i += 20) {
    await Promise.all(
      Array.from({ length: Math.min(20, functions - i) }, async (_, k) => {
        const address = i + k;
        const fn = await admin.post(`/api/v1/connections/${id}/functions`, {
          name: `r${address}`,
          type: 'modbus.readHoldingRegisters',
          config: { address },
          uns: { topic: `v1/bench/modbus/r${address}`, intervalMs: 1000 },
        });
        if (fn.status !== 201) throw new Error(fn.text);
      }),
    );
  }
  await admin.post(`/api/v1/connections/${id}/start`);
  const metrics = async () => (await admin.get(`/api/v1/connections/${id}/runtime`)).body.data.metrics;
  while ((await metrics()).valuesPublished < functions) await sleep(200);
  await sleep(2000);
  const before = { metrics: await metrics(), requests: await deviceRequests() };
  await sleep(seconds * 1000);
  const after = { metrics: await metrics(), requests: await deviceRequests() };
  await admin.post(`/api/v1/connections/${id}/stop`);
  await server.close();
  return {
    requests: (after.requests - before.requests) / seconds,
    values: (after.metrics.valuesPublished - before.metrics.valuesPublished) / seconds,
    errors: after.metrics.publishErrors - before.metrics.publishErrors,
  };
}

try {
  console.log(`load average at start: ${load()}`);
  const base = await baseline();
  const ours = await meridian();
  console.log(`${functions} holding registers polled every 1 s, window ${seconds} s`);
  console.log(
    `modbus-serial loop, 125-register blocks: ${base.requests.toFixed(1)} requests/s at the device, ${base.values.toFixed(0)} values/s`,
  );
  console.log(
    `Meridian, ${functions} functions:        ${ours.requests.toFixed(1)} requests/s at the device, ${ours.values.toFixed(0)} values/s into the UNS, ${ours.errors} refused`,
  );
  console.log(`ratio (Meridian / modbus-serial loop), values/s: ${(ours.values / base.values).toFixed(3)}x`);
  console.log(`load average at end: ${load()}`);
} finally {
  await new Promise<void>((resolve) => counter.close(() => resolve()));
  await sim.stop();
}
