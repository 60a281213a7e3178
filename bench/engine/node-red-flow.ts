/**
 * The Node-RED baseline of the UNS-triggered pipeline bench: `mqtt in` (JSON) → `change` (JSONata) →
 * `mqtt out`, through the machine's Mosquitto, run by Node-RED's own `red.js` in a process of its own.
 * Its legs are Meridian's: messages in at QoS 1 (acknowledged), out at QoS 0, as Meridian's broker
 * delivers values published by a pipeline (or over HTTP) whatever the subscription's QoS.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { freePort } from '../../test/helpers/free-port.js';
import { spawnTracked } from '../child-processes.js';

export interface NodeRedFlow {
  /** Where the flow reads (`mqtt in`) and writes (`mqtt out`) on the broker. */
  inTopic: string;
  outTopic: string;
  pid: number;
  stop(): Promise<void>;
}

export async function startNodeRed(
  brokerHost: string,
  brokerPort: number,
  expression: string,
): Promise<NodeRedFlow> {
  const require = createRequire(import.meta.url);
  const red = join(dirname(require.resolve('node-red/package.json')), 'red.js');
  const userDir = mkdtempSync(join(tmpdir(), 'meridian-bench-node-red-'));
  const base = `meridian-bench/${process.pid}-${Date.now()}`;
  const inTopic = `${base}/in`;
  const outTopic = `${base}/out`;
  // Node-RED ids are hex strings (short words such as `change` are taken for config node references).
  const [TAB, BROKER, IN, CHANGE, OUT] = ['a1', 'b1', 'c1', 'c2', 'c3'].map((n) => `f00000000000${n}00`);
  const flows = [
    { id: TAB, type: 'tab', label: 'bench' },
    {
      id: BROKER,
      type: 'mqtt-broker',
      broker: brokerHost,
      port: String(brokerPort),
      clientid: '',
      protocolVersion: '4',
      keepalive: '60',
      cleansession: true,
    },
    {
      id: IN,
      type: 'mqtt in',
      z: TAB,
      topic: inTopic,
      qos: '1',
      datatype: 'json',
      broker: BROKER,
      wires: [[CHANGE]],
    },
    {
      id: CHANGE,
      type: 'change',
      z: TAB,
      rules: [{ t: 'set', p: 'payload', pt: 'msg', to: expression, tot: 'jsonata' }],
      wires: [[OUT]],
    },
    {
      id: OUT,
      type: 'mqtt out',
      z: TAB,
      topic: outTopic,
      // As Meridian delivers what a pipeline publishes to the UNS: at QoS 0 (README, MQTT).
      qos: '0',
      retain: 'false',
      broker: BROKER,
      wires: [],
    },
  ];
  writeFileSync(join(userDir, 'flows.json'), JSON.stringify(flows));
  const port = await freePort();
  const child = spawnTracked(
    process.execPath,
    [red, '--userDir', userDir, '--port', String(port), 'flows.json'],
    {
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  if (process.env.NODE_RED_LOG) {
    child.stdout!.pipe(process.stderr);
    child.stderr!.pipe(process.stderr);
  }
  let output = '';
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`Node-RED did not connect:\n${output}`)), 60_000);
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      if (/Connected to broker/.test(output)) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.once('exit', (code) => reject(new Error(`Node-RED exited (${code}):\n${output}`)));
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return {
    inTopic,
    outTopic,
    pid: child.pid!,
    async stop() {
      child.kill('SIGTERM');
      await exited;
    },
  };
}
