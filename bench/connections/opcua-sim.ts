// An OPC UA server with N Double variables, every one changed each second; prints `listening: {"port":...}`.
import { DataType, OPCUAServer, type UAVariable, Variant } from 'node-opcua';

const count = Number(process.argv[2] ?? 10_000);
const port = Number(process.argv[3] ?? 48400);
const server = new OPCUAServer({
  port,
  hostname: '127.0.0.1',
  resourcePath: '/bench',
  allowAnonymous: true,
  maxAllowedSessionNumber: 10,
});
await server.initialize();
const addressSpace = server.engine.addressSpace!;
const ns = addressSpace.getOwnNamespace();
const folder = ns.addObject({ organizedBy: addressSpace.rootFolder.objects, browseName: 'Bench' });
const variables: UAVariable[] = [];
for (let i = 0; i < count; i++) {
  const v = ns.addVariable({
    componentOf: folder,
    browseName: `v${i}`,
    nodeId: `s=v${i}`,
    dataType: 'Double',
    minimumSamplingInterval: 100,
  });
  v.setValueFromSource(new Variant({ dataType: DataType.Double, value: 0 }));
  variables.push(v);
}
await server.start();
let tick = 0;
setInterval(() => {
  tick++;
  for (const v of variables) v.setValueFromSource(new Variant({ dataType: DataType.Double, value: tick }));
}, 1000);
console.log(`listening: ${JSON.stringify({ port, count })}`);
process.on('SIGTERM', () => {
  void server.shutdown(0).then(() => process.exit(0));
});
