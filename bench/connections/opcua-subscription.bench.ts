/**
 * OPC UA subscription of N monitored items changing every second (default 10,000), into the UNS:
 * values historized per second and values lost, against the node-opcua client alone receiving the
 * same notifications. The server runs in a process of its own; both runs measure the same window.
 *   node --import tsx bench/connections/opcua-subscription.bench.ts [items] [seconds]
 */
import { AttributeIds, ClientSubscription, OPCUAClient, TimestampsToReturn } from 'node-opcua';
import { freePort } from '../../test/helpers/free-port.js';
import { startTestServer } from '../../test/helpers/test-server.js';
import { spawnServerProcess } from '../server-process.js';

const items = Number(process.argv[2] ?? 10_000);
const seconds = Number(process.argv[3] ?? 20);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const nodeIds = Array.from({ length: items }, (_, i) => `ns=1;s=v${i}`);

const port = await freePort();
const sim = await spawnServerProcess<{ port: number }>('bench/connections/opcua-sim.ts', [
  String(items),
  String(port),
]);
const endpointUrl = `opc.tcp://127.0.0.1:${port}/bench`;

async function baseline(): Promise<number> {
  const client = OPCUAClient.create({ endpointMustExist: false, connectionStrategy: { maxRetry: 0 } });
  await client.connect(endpointUrl);
  const session = await client.createSession();
  const subscription = ClientSubscription.create(session, {
    requestedPublishingInterval: 1000,
    requestedLifetimeCount: 100,
    requestedMaxKeepAliveCount: 10,
    maxNotificationsPerPublish: 0,
    publishingEnabled: true,
  });
  let received = 0;
  const group = await subscription.monitorItems(
    nodeIds.map((nodeId) => ({ nodeId, attributeId: AttributeIds.Value })),
    { samplingInterval: 250, discardOldest: true, queueSize: 10 },
    TimestampsToReturn.Both,
  );
  group.on('changed', () => {
    received++;
  });
  await sleep(5000);
  const start = received;
  await sleep(seconds * 1000);
  const count = received - start;
  await subscription.terminate();
  await session.close();
  await client.disconnect();
  return count;
}

async function meridian(): Promise<{ published: number; errors: number }> {
  const server = await startTestServer('sqlite');
  const admin = server.admin;
  const created = await admin.post('/api/v1/connections', {
    name: 'bench',
    protocol: 'opcua',
    config: { endpointUrl, timeoutMs: 60000 },
  });
  const id = created.body.data.id;
  const fn = await admin.post(`/api/v1/connections/${id}/functions`, {
    name: 'all',
    type: 'opcua.subscribe',
    config: { nodeIds, samplingIntervalMs: 250, publishingIntervalMs: 1000 },
    uns: { topic: 'v1/bench/opcua' },
  });
  if (fn.status !== 201) throw new Error(fn.text);
  await admin.post(`/api/v1/connections/${id}/start`);
  const metrics = async () => (await admin.get(`/api/v1/connections/${id}/runtime`)).body.data.metrics;
  for (;;) {
    if ((await metrics()).valuesPublished >= items) break;
    await sleep(500);
  }
  await sleep(3000);
  const start = await metrics();
  await sleep(seconds * 1000);
  const end = await metrics();
  await admin.post(`/api/v1/connections/${id}/stop`);
  await server.close();
  return {
    published: end.valuesPublished - start.valuesPublished,
    errors: end.publishErrors - start.publishErrors,
  };
}

try {
  const expected = items * seconds;
  const base = await baseline();
  const ours = await meridian();
  const lostBase = Math.max(0, expected - base);
  const lostOurs = Math.max(0, expected - ours.published) + ours.errors;
  console.log(`items ${items}, changes every 1 s, window ${seconds} s, expected ${expected} values`);
  console.log(
    `node-opcua client alone: ${(base / seconds).toFixed(0)} notifications/s, ${lostBase} short of expected`,
  );
  console.log(
    `Meridian into the UNS:   ${(ours.published / seconds).toFixed(0)} values historized/s, ${lostOurs} short of expected, ${ours.errors} refused`,
  );
  console.log(`ratio (Meridian / node-opcua alone): ${(ours.published / base).toFixed(3)}x`);
} finally {
  await sim.stop();
}
