import { Agent, buildConnector } from 'undici';
import type { EgressPolicy } from '../../../platform/egress/egress-policy.js';

/**
 * An undici dispatcher whose every new socket (the first request's, a redirect's to another host, a
 * reconnect after keep-alive ended) is first checked by the egress policy and then opened to the
 * addresses that were checked: undici's connector gets the checked address as `hostname`, while TLS
 * keeps the name for SNI and the certificate (undici derives `servername` from the Host) and the Host
 * header keeps the URL's. A denial fails the request with the EgressDeniedError as the fetch's cause.
 */
export function checkedAgent(egress: EgressPolicy, timeoutMs: number): Agent {
  const connector = buildConnector({ timeout: timeoutMs });
  return new Agent({
    connect(options, callback) {
      const port = Number(options.port) || (options.protocol === 'https:' ? 443 : 80);
      egress.resolve(options.hostname, port).then(
        (target) => connector({ ...options, hostname: target.addresses[0]! }, callback),
        (error: Error) => callback(error, null),
      );
    },
  });
}
