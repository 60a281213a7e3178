import type { TrustProxySetting } from '../config/config.schema.js';

/**
 * Fastify's `trustProxy` for MERIDIAN_TRUST_PROXY. Addresses and CIDRs are passed as they are. A hop count
 * becomes proxy-addr's hop rule as a function (hop i is trusted when i < hops; hop 0 is the socket peer),
 * because Fastify 5.12 deliberately ignores a bare number. A hop count believes whoever connects directly,
 * so it is safe only where Meridian is reachable through the proxy alone; addresses are the stricter choice.
 */
export function fastifyTrustProxy(
  setting: TrustProxySetting,
): false | string[] | ((address: string, hop: number) => boolean) {
  if (setting === false || setting === 0) return false;
  if (typeof setting === 'number') return (_address, hop) => hop < setting;
  return setting;
}
