import { isIP, type LookupFunction, type Socket, connect as tcpConnect } from 'node:net';
import { normalizeHost } from './egress-addresses.js';

/** A target the policy checked: the host as given, its port, and the addresses it resolved to (all allowed). */
export interface EgressTarget {
  /** The host, normalized (lower case, no brackets). */
  host: string;
  port: number;
  /** The DNS name it was given by; absent for an IP literal. Keep it for TLS SNI and the Host header. */
  name?: string;
  /** Every address the name resolved to, in the resolver's order; the connection uses these only. */
  addresses: string[];
}

/** Thrown when the policy denies a target; the message names the egress policy and never the port's state. */
export class EgressDeniedError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'EgressDeniedError';
  }
}

/**
 * A `lookup` for net, tls, http and ws that answers the target's checked addresses and never asks DNS
 * again, so that the connection goes where the check looked (no second lookup, no DNS rebinding). Any
 * other name is refused: nothing unchecked can ride along.
 */
export function pinnedLookup(target: EgressTarget): LookupFunction {
  return (hostname, options, callback) => {
    if (normalizeHost(hostname) !== target.host) {
      callback(new EgressDeniedError(`egress policy: ${hostname} was not checked`), '', 0);
      return;
    }
    const family = typeof options === 'number' ? options : (options?.family ?? 0);
    const all = target.addresses
      .map((address) => ({ address, family: isIP(address) }))
      .filter((a) => family === 0 || family === a.family || family === `IPv${a.family}`);
    if (all.length === 0) {
      callback(new EgressDeniedError(`egress policy: ${hostname} has no address of family ${family}`), '', 0);
      return;
    }
    if (typeof options === 'object' && options?.all)
      (callback as (e: null, a: typeof all) => void)(null, all);
    else callback(null, all[0]!.address, all[0]!.family);
  };
}

/** A TCP socket to a checked target, connecting to its pinned addresses only. */
export function connectPinned(target: EgressTarget): Socket {
  return tcpConnect({ host: target.host, port: target.port, lookup: pinnedLookup(target) });
}
