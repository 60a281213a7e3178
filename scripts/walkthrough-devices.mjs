#!/usr/bin/env node
// The devices the README's walkthrough talks to, on 127.0.0.1 until stopped (Ctrl-C or kill):
// - a Modbus TCP device (modbus-serial's ServerTCP, unit 1) on --modbus (default 5020): holding registers
//   100-101 a float32 of 724 low word first, 200-209 and 230 int16 oven zones, 300-309 int16 raw temperatures;
// - an OPC UA server (node-opcua) on --opcua (default 4840), anonymous, security None, at
//   opc.tcp://127.0.0.1:4840/UA/Plant: Objects > Plant1 > Press4 > Temperature (Double 71.5) and
//   Counter (Int32, +1 a second); node ids as a device names them (`ns=1;s=Plant1/Press4/Counter`).
// Prints one line, "devices ready", when both listen.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import ModbusRTU from 'modbus-serial';
import { DataType, OPCUACertificateManager, OPCUAServer, Variant } from 'node-opcua';

const { values } = parseArgs({ options: { modbus: { type: 'string' }, opcua: { type: 'string' } } });
const modbusPort = Number(values.modbus ?? 5020);
const opcuaPort = Number(values.opcua ?? 4840);

const holding = new Map();
const float = Buffer.alloc(4);
float.writeFloatBE(724);
holding.set(100, float.readUInt16BE(2)); // low word first (CDAB)
holding.set(101, float.readUInt16BE(0));
for (let i = 0; i < 10; i++) holding.set(200 + i, 180 + i);
holding.set(230, 215);
for (const [i, raw] of [201, 203, 199, 202, 200, 198, 204, 201, 200, 199].entries())
  holding.set(300 + i, raw);

const modbus = new ModbusRTU.ServerTCP(
  { getHoldingRegister: (address) => holding.get(address) ?? 0, getInputRegister: () => 0 },
  { host: '127.0.0.1', port: modbusPort, unitID: 1 },
);
await new Promise((resolve, reject) => {
  modbus.on('initialized', resolve);
  modbus.on('socketError', reject);
});

const pki = mkdtempSync(join(tmpdir(), 'meridian-walkthrough-opcua-'));
const opcua = new OPCUAServer({
  port: opcuaPort,
  host: '127.0.0.1',
  resourcePath: '/UA/Plant',
  serverCertificateManager: new OPCUACertificateManager({
    rootFolder: join(pki, 'pki'),
    automaticallyAcceptUnknownCertificate: true,
  }),
  allowAnonymous: true,
});
await opcua.initialize();
const addressSpace = opcua.engine.addressSpace;
const ns = addressSpace.getOwnNamespace();
const plant = ns.addFolder(addressSpace.rootFolder.objects, { browseName: 'Plant1', nodeId: 's=Plant1' });
const press = ns.addObject({ organizedBy: plant, browseName: 'Press4', nodeId: 's=Plant1/Press4' });
ns.addVariable({
  componentOf: press,
  browseName: 'Temperature',
  nodeId: 's=Plant1/Press4/Temperature',
  dataType: 'Double',
  minimumSamplingInterval: 100,
  value: { get: () => new Variant({ dataType: DataType.Double, value: 71.5 }) },
});
let counter = 0;
const ticking = setInterval(() => counter++, 1000);
ns.addVariable({
  componentOf: press,
  browseName: 'Counter',
  nodeId: 's=Plant1/Press4/Counter',
  dataType: 'Int32',
  minimumSamplingInterval: 100,
  value: { get: () => new Variant({ dataType: DataType.Int32, value: counter }) },
});
await opcua.start();
console.log('devices ready');

async function stop() {
  clearInterval(ticking);
  await opcua.shutdown(0);
  await new Promise((resolve) => modbus.close(resolve));
  rmSync(pki, { recursive: true, force: true });
  process.exit(0);
}
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
