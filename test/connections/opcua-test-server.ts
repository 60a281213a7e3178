import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  DataType,
  MessageSecurityMode,
  OPCUACertificateManager,
  OPCUAServer,
  SecurityPolicy,
  StatusCodes,
  type UAVariable,
  Variant,
} from 'node-opcua';

export const OPCUA_USER = 'operator';
export const OPCUA_PASSWORD = 'opc-Secret-4711';

/**
 * An in-process OPC UA server (node-opcua): Objects/Press4 with Temperature (Double, writable),
 * Pressure (Uncertain status) and Count; security None and Basic256Sha256 SignAndEncrypt;
 * anonymous and operator/password.
 */
export class OpcuaTestServer {
  temperature = 20.5;
  pressure!: UAVariable;
  count!: UAVariable;
  private server!: OPCUAServer;
  private readonly dir = mkdtempSync(join(tmpdir(), 'meridian-opcua-'));

  /**
   * `host`: the address it listens on; `advertised`: the host its endpoint descriptions name (GetEndpoints),
   * by default the same (a server behind NAT or in a container advertises another).
   */
  constructor(
    readonly port: number,
    readonly host = '127.0.0.1',
    readonly advertised = host,
  ) {}

  get endpointUrl(): string {
    return `opc.tcp://${this.host}:${this.port}/UA/Test`;
  }

  async start(): Promise<void> {
    const serverCertificateManager = new OPCUACertificateManager({
      rootFolder: join(this.dir, 'pki'),
      automaticallyAcceptUnknownCertificate: true,
    });
    this.server = new OPCUAServer({
      port: this.port,
      host: this.host,
      hostname: this.advertised,
      resourcePath: '/UA/Test',
      serverCertificateManager,
      securityModes: [MessageSecurityMode.None, MessageSecurityMode.SignAndEncrypt],
      securityPolicies: [SecurityPolicy.None, SecurityPolicy.Basic256Sha256],
      allowAnonymous: true,
      userManager: {
        isValidUser: (user: string, password: string) => user === OPCUA_USER && password === OPCUA_PASSWORD,
      },
    });
    await this.server.initialize();
    const addressSpace = this.server.engine.addressSpace!;
    const ns = addressSpace.getOwnNamespace();
    const press = ns.addObject({ organizedBy: addressSpace.rootFolder.objects, browseName: 'Press4' });
    ns.addVariable({
      componentOf: press,
      browseName: 'Temperature',
      nodeId: 's=Press4.Temperature',
      dataType: 'Double',
      minimumSamplingInterval: 100,
      value: {
        get: () => new Variant({ dataType: DataType.Double, value: this.temperature }),
        set: (variant: Variant) => {
          this.temperature = variant.value as number;
          return StatusCodes.Good;
        },
      },
    });
    this.pressure = ns.addVariable({
      componentOf: press,
      browseName: 'Pressure',
      nodeId: 's=Press4.Pressure',
      dataType: 'Double',
    });
    this.pressure.setValueFromSource(
      new Variant({ dataType: DataType.Double, value: 3.2 }),
      StatusCodes.UncertainLastUsableValue,
    );
    this.count = ns.addVariable({
      componentOf: press,
      browseName: 'Count',
      nodeId: 's=Press4.Count',
      dataType: 'Int32',
      minimumSamplingInterval: 50,
    });
    this.count.setValueFromSource(new Variant({ dataType: DataType.Int32, value: 0 }));
    await this.server.start();
  }

  /** Changes the Count variable (a subscribed item). */
  setCount(value: number): void {
    this.count.setValueFromSource(new Variant({ dataType: DataType.Int32, value }));
  }

  /** Sessions open on the server now. */
  sessions(): number {
    return this.server.currentSessionCount;
  }

  async stop(): Promise<void> {
    await this.server?.shutdown(0);
    rmSync(this.dir, { recursive: true, force: true });
  }
}
