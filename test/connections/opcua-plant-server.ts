import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DataType, OPCUACertificateManager, OPCUAServer, Variant } from 'node-opcua';

export interface PlantServer {
  endpointUrl: string;
  stop(): Promise<void>;
}

/**
 * An OPC UA server with a plant tree of three levels under Objects: Plant1 > Press01..Press<presses> >
 * Temperature (Double), Counter (Int32); node ids as a device names them (`ns=1;s=Plant1/Press04/Counter`).
 */
export async function startPlantServer(port: number, presses: number): Promise<PlantServer> {
  const dir = mkdtempSync(join(tmpdir(), 'meridian-opcua-browse-'));
  const server = new OPCUAServer({
    port,
    host: '127.0.0.1',
    resourcePath: '/UA/Plant',
    serverCertificateManager: new OPCUACertificateManager({
      rootFolder: join(dir, 'pki'),
      automaticallyAcceptUnknownCertificate: true,
    }),
    allowAnonymous: true,
  });
  await server.initialize();
  const addressSpace = server.engine.addressSpace!;
  const ns = addressSpace.getOwnNamespace();
  const plant = ns.addFolder(addressSpace.rootFolder.objects, { browseName: 'Plant1', nodeId: 's=Plant1' });
  const counters = new Map<string, number>();
  for (let p = 1; p <= presses; p++) {
    const name = `Press${String(p).padStart(2, '0')}`;
    const press = ns.addObject({ organizedBy: plant, browseName: name, nodeId: `s=Plant1/${name}` });
    ns.addVariable({
      componentOf: press,
      browseName: 'Temperature',
      nodeId: `s=Plant1/${name}/Temperature`,
      dataType: 'Double',
      value: { get: () => new Variant({ dataType: DataType.Double, value: 20 + p }) },
    });
    counters.set(name, 0);
    ns.addVariable({
      componentOf: press,
      browseName: 'Counter',
      nodeId: `s=Plant1/${name}/Counter`,
      dataType: 'Int32',
      minimumSamplingInterval: 50,
      value: { get: () => new Variant({ dataType: DataType.Int32, value: counters.get(name)! }) },
    });
  }
  await server.start();
  return {
    endpointUrl: `opc.tcp://127.0.0.1:${port}/UA/Plant`,
    async stop() {
      await server.shutdown(0);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
