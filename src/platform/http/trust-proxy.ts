/**
 * Which proxies' X-Forwarded-For is believed: `false` none, a number of hops (the client address is that
 * many entries from the right), or the proxies' addresses and CIDRs (Fastify's `trustProxy` takes each).
 */
export type TrustProxySetting = false | number | string[];

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
