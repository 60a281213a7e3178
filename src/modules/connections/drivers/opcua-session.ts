import { join } from 'node:path';
import type { ClientSession, OPCUAClient, UserIdentityInfo } from 'node-opcua';
import { type DriverContext, DriverError, withTimeout } from './driver.js';
import { checkedTarget, urlTarget } from './driver-egress.js';
import { checkedTransports, discoverEndpoint, OPCUA_PORTS } from './opcua-egress.js';

type Opcua = typeof import('node-opcua');

export const SECURITY_POLICIES = [
  'None',
  'Basic256Sha256',
  'Aes128_Sha256_RsaOaep',
  'Aes256_Sha256_RsaPss',
] as const;
export const SECURITY_MODES = ['None', 'Sign', 'SignAndEncrypt'] as const;

/**
 * Whether a session failure is the server refusing the identity. node-opcua reports it as an Error
 * whose message carries the OPC UA status name (Part 4 §7.34: BadUserAccessDenied,
 * BadIdentityTokenInvalid, BadIdentityTokenRejected); this is the one place that reads it.
 */
function isIdentityRefused(error: unknown): boolean {
  const text = error instanceof Error ? error.message : String(error);
  return /BadUserAccessDenied|BadIdentityToken/.test(text);
}

/**
 * Whether a failure is the server refusing the secure channel: the security policy or mode, or the
 * certificate (Part 4 §7.34: BadSecurityChecksFailed, BadSecurityPolicyRejected,
 * BadSecurityModeRejected, BadCertificate...), as node-opcua names the status in its message.
 */
function isSecurityRejected(error: unknown): boolean {
  const text = error instanceof Error ? error.message : String(error);
  return /BadSecurity|BadCertificate/.test(text);
}

/**
 * Opens a client and a session on the endpoint a config names, every socket through the egress policy
 * (opcua-egress.ts): the endpoint is checked, its certificate asked for over a checked channel, then
 * the session opened. Failures are DriverErrors: a denial names the egress policy (`configuration`), a
 * refused identity is `authentication`, the rest `transport`.
 */
export async function openSession(
  opcua: Opcua,
  config: Record<string, unknown>,
  context: DriverContext,
): Promise<{ client: OPCUAClient; session: ClientSession }> {
  const { MessageSecurityMode, OPCUACertificateManager, OPCUAClient, SecurityPolicy, UserTokenType } = opcua;
  const endpointUrl = config.endpointUrl as string;
  const timeoutMs = (config.timeoutMs as number) ?? 10000;
  const securityMode =
    MessageSecurityMode[(config.securityMode as (typeof SECURITY_MODES)[number]) ?? 'None'];
  const securityPolicy =
    SecurityPolicy[(config.securityPolicy as (typeof SECURITY_POLICIES)[number]) ?? 'None'];
  if ((securityMode === MessageSecurityMode.None) !== (securityPolicy === SecurityPolicy.None)) {
    throw new DriverError(
      'configuration',
      'securityMode None goes with securityPolicy None, and only with it',
    );
  }
  const { host, port } = urlTarget('config.endpointUrl', endpointUrl, OPCUA_PORTS);
  await checkedTarget(context, host, port);
  const clientCertificateManager = new OPCUACertificateManager({
    rootFolder: join(context.dataDir, 'opcua-pki'),
    automaticallyAcceptUnknownCertificate: true,
  });
  const transportFactory = checkedTransports(opcua, context.egress);
  let client: OPCUAClient | undefined;
  try {
    const endpoint = await discoverEndpoint(opcua, {
      endpointUrl,
      securityMode,
      securityPolicy,
      transportFactory,
      clientCertificateManager,
      timeoutMs,
    });
    // Given a certificate (an empty one without security, as for the discovery), node-opcua never
    // fetches one itself (see discoverEndpoint).
    const serverCertificate = endpoint?.serverCertificate?.length
      ? endpoint.serverCertificate
      : securityMode === MessageSecurityMode.None
        ? Buffer.alloc(0)
        : undefined;
    client = OPCUAClient.create({
      applicationName: 'Meridian',
      securityMode,
      securityPolicy,
      endpointMustExist: false,
      keepSessionAlive: true,
      requestedSessionTimeout: 60_000,
      connectionStrategy: { maxRetry: 0, initialDelay: 500, maxDelay: 1000 },
      clientCertificateManager,
      defaultTransactionTimeout: timeoutMs,
      transportFactory,
      ...(serverCertificate ? { serverCertificate } : {}),
    });
    await withTimeout(client.connect(endpointUrl), timeoutMs, `connecting to ${endpointUrl}`);
    const identity: UserIdentityInfo = config.username
      ? {
          type: UserTokenType.UserName,
          userName: String(config.username),
          password: (config.password as string) ?? '',
        }
      : { type: UserTokenType.Anonymous };
    const session = await withTimeout(client.createSession(identity), timeoutMs, 'creating the session');
    return { client, session };
  } catch (error) {
    await client?.disconnect().catch(() => {});
    if (transportFactory.denied) throw new DriverError('configuration', transportFactory.denied.message);
    if (error instanceof DriverError) throw error;
    if (isIdentityRefused(error)) {
      throw new DriverError(
        'authentication',
        `the server refused the identity of ${config.username ? `user ${String(config.username)}` : 'an anonymous user'}`,
      );
    }
    if (isSecurityRejected(error)) {
      throw new DriverError(
        'configuration',
        `the server refused the secure channel: ${(error as Error).message.split('\n')[0]}`,
        { reason: 'security_rejected', cause: error },
      );
    }
    throw new DriverError(
      'transport',
      `cannot open a session with ${endpointUrl}: ${(error as Error).message.split('\n')[0]}`,
      { cause: error },
    );
  }
}
