import type { Socket } from 'node:net';
import type { EndpointDescription, IClientTransportFactory, OPCUACertificateManager } from 'node-opcua';
import { connectPinned, EgressDeniedError } from '../../../platform/egress/egress-pinning.js';
import type { EgressPolicy } from '../../../platform/egress/egress-policy.js';
import { DriverError, withTimeout } from './driver.js';
import { urlTarget } from './driver-egress.js';

type Opcua = typeof import('node-opcua');

/** The default port of `opc.tcp://` (OPC UA Part 6 §7.2). */
export const OPCUA_PORTS = { 'opc.tcp:': 4840 };

/** A transport factory whose sockets all passed the egress policy, and the last refusal it made. */
export interface CheckedTransports extends IClientTransportFactory {
  denied: EgressDeniedError | undefined;
}

/** A TCP socket to an OPC UA endpoint URL, checked and pinned, connected (or failed) within `timeoutMs`. */
async function openChecked(egress: EgressPolicy, endpointUrl: string, timeoutMs: number): Promise<Socket> {
  const { host, port } = urlTarget('endpointUrl', endpointUrl, OPCUA_PORTS);
  const socket = connectPinned(await egress.resolve(host, port));
  const timedOut = () => socket.destroy(new Error(`connecting timed out after ${timeoutMs} ms`));
  socket.setTimeout(timeoutMs, timedOut);
  try {
    await new Promise<void>((resolve, reject) => {
      socket.once('connect', () => resolve());
      socket.once('error', reject);
    });
  } finally {
    socket.off('timeout', timedOut);
    socket.setTimeout(0);
  }
  socket.setKeepAlive(true, timeoutMs >> 1);
  return socket;
}

/**
 * node-opcua's `transportFactory` (a public client option) made of transports that open their socket
 * through the egress policy: every secure channel the client opens (the first, each reconnect after a
 * lost connection, and an endpoint the server advertises, should node-opcua be made to follow it) is
 * checked after DNS and pinned. It builds on node-opcua's ReverseClientTCP_transport, which performs
 * the HEL/ACK handshake on a socket handed to it; here that socket is dialled, not accepted.
 */
export function checkedTransports(opcua: Opcua, egress: EgressPolicy): CheckedTransports {
  class CheckedTransport extends opcua.ReverseClientTCP_transport {
    private dialling = '';

    constructor(settings?: ConstructorParameters<Opcua['ReverseClientTCP_transport']>[1]) {
      super(async () => {
        const transport = this;
        const socket = await openChecked(egress, transport.dialling, transport.timeout).catch((error) => {
          if (error instanceof EgressDeniedError) factory.denied = error;
          throw error;
        });
        // As node-opcua's own TCP transport does: a socket silent for half the timeout is broken.
        socket.setTimeout(transport.timeout >> 1, () => transport.forceConnectionBreak());
        return { socket, endpointUrl: transport.dialling, serverUri: '' };
      }, settings);
    }

    override connect(endpointUrl: string, callback: (error?: Error) => void): void {
      this.dialling = endpointUrl;
      super.connect(endpointUrl, callback);
    }
  }
  const factory: CheckedTransports = {
    denied: undefined,
    create: (settings) => new CheckedTransport(settings),
  };
  return factory;
}

/**
 * The endpoint of the server that matches the security mode and policy, asked for over a checked
 * transport (GetEndpoints on a channel without security). node-opcua would otherwise ask through a
 * client of its own that takes no transport factory, and so opens a socket no policy sees; handing the
 * client the endpoint's certificate skips that. The endpoint URL the server advertises is never dialled:
 * the session goes to the URL the connection names, which the policy checked.
 */
export async function discoverEndpoint(
  opcua: Opcua,
  options: {
    endpointUrl: string;
    securityMode: number;
    securityPolicy: string;
    transportFactory: CheckedTransports;
    clientCertificateManager: OPCUACertificateManager;
    timeoutMs: number;
  },
): Promise<EndpointDescription | undefined> {
  const client = opcua.OPCUAClient.create({
    applicationName: 'Meridian',
    endpointMustExist: false,
    connectionStrategy: { maxRetry: 0, initialDelay: 500, maxDelay: 1000 },
    clientCertificateManager: options.clientCertificateManager,
    transportFactory: options.transportFactory,
    defaultTransactionTimeout: options.timeoutMs,
    // A channel without security needs no server certificate; giving it one (an empty one) is what keeps
    // node-opcua from fetching it first through its own client (NODEOPCUA_CLIENT_FORCE_ENDPOINT_DISCOVERY
    // makes it do so even without security, and then follow the endpoint URL the server advertises).
    serverCertificate: Buffer.alloc(0),
  });
  try {
    await withTimeout(
      client.connect(options.endpointUrl),
      options.timeoutMs,
      `connecting to ${options.endpointUrl}`,
    );
    const endpoints = await withTimeout(client.getEndpoints(), options.timeoutMs, 'asking for the endpoints');
    const matching = endpoints.filter(
      (e) => e.securityMode === options.securityMode && e.securityPolicyUri === options.securityPolicy,
    );
    if (matching.length === 0 && options.securityMode !== opcua.MessageSecurityMode.None) {
      throw new DriverError(
        'configuration',
        `the server offers no endpoint with securityMode ${opcua.MessageSecurityMode[options.securityMode]} and securityPolicy ${options.securityPolicy.split('#')[1]}`,
        { reason: 'security_rejected' },
      );
    }
    return matching[0];
  } finally {
    await client.disconnect().catch(() => {});
  }
}
