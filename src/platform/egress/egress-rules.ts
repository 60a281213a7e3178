import { embeddedIpv4, type IpAddress, type IpRange, inRange } from './egress-addresses.js';
import { DEFAULT_DENIALS } from './egress-defaults.js';
import { type EgressEntry, entryMatches } from './egress-entries.js';

/** MERIDIAN_EGRESS_ALLOW and MERIDIAN_EGRESS_DENY, parsed. */
export interface EgressRules {
  allow: readonly EgressEntry[];
  deny: readonly EgressEntry[];
}

/** A server Meridian itself depends on (DATABASE_URL, MQTT_URL): its host's addresses now and its port. */
export interface Backend {
  setting: string;
  addresses: readonly IpAddress[];
  port: number;
}

/** Meridian's own endpoints as they are now, which no connection reaches by default. */
export interface OwnEndpoints {
  /** The ports Meridian listens on (HTTP, the embedded MQTT broker). */
  ports: readonly number[];
  /** Where those ports are: this host's addresses (loopback, unspecified, every interface's). */
  localRanges: readonly IpRange[];
  backends: readonly Backend[];
}

/** One address and port a connection is about to reach, with the name it was given by (if any). */
export interface EgressCandidate {
  address: IpAddress;
  port: number;
  name?: string | undefined;
}

/** Allowed, or denied with the reason and how an operator could allow it (if at all). */
export type EgressVerdict = { allowed: true } | { allowed: false; reason: string; hint: string | null };

const ALLOWED: EgressVerdict = { allowed: true };
const ALLOW_HINT = 'MERIDIAN_EGRESS_ALLOW can allow it';
const PORT_HINT = 'only a MERIDIAN_EGRESS_ALLOW entry that names the port (host:port) allows it';

function decideOne(rules: EgressRules, own: OwnEndpoints, target: EgressCandidate): EgressVerdict {
  const { address, port, name } = target;
  const covers = (entry: EgressEntry) =>
    (entry.port === undefined || entry.port === port) && entryMatches(entry, address, name);
  const denied = rules.deny.find(covers);
  if (denied) return { allowed: false, reason: `MERIDIAN_EGRESS_DENY lists ${denied.text}`, hint: null };
  // An entry with a port is the most specific rule there is: it lifts every default denial.
  if (rules.allow.some((entry) => entry.port !== undefined && covers(entry))) return ALLOWED;
  // Meridian's own ports and its backends' ports are denied unless an entry names the port: allowing
  // a lab's loopback devices (127.0.0.1) must not open Meridian's own API or database to its connections.
  if (own.ports.includes(port) && own.localRanges.some((range) => inRange(address, range)))
    return { allowed: false, reason: `Meridian's own port ${port}`, hint: PORT_HINT };
  const backend = own.backends.find(
    (b) => b.port === port && b.addresses.some((a) => sameAddress(a, address)),
  );
  if (backend) return { allowed: false, reason: `the ${backend.setting} server`, hint: PORT_HINT };
  if (rules.allow.some(covers)) return ALLOWED;
  const denial = DEFAULT_DENIALS.find((d) => inRange(address, d.range));
  if (denial) return { allowed: false, reason: denial.reason, hint: ALLOW_HINT };
  const host = own.backends.find((b) => b.addresses.some((a) => sameAddress(a, address)));
  if (host) return { allowed: false, reason: `the host of ${host.setting}`, hint: ALLOW_HINT };
  return ALLOWED;
}

function sameAddress(a: IpAddress, b: IpAddress): boolean {
  return a.kind() === b.kind() && a.toNormalizedString() === b.toNormalizedString();
}

/**
 * The egress policy's answer for one address and port. In order: a MERIDIAN_EGRESS_DENY entry denies;
 * a MERIDIAN_EGRESS_ALLOW entry with a port allows; Meridian's own ports (on this host) and the ports of
 * DATABASE_URL's and MQTT_URL's servers are denied; any other ALLOW entry allows; the default denials
 * (egress-defaults.ts) and the hosts of DATABASE_URL and MQTT_URL are denied; everything else is allowed.
 * An address that carries an IPv4 address for a translator is denied when either is.
 */
export function decideEgress(rules: EgressRules, own: OwnEndpoints, target: EgressCandidate): EgressVerdict {
  const verdict = decideOne(rules, own, target);
  if (!verdict.allowed) return verdict;
  const inner = embeddedIpv4(target.address);
  return inner ? decideOne(rules, own, { ...target, address: inner }) : verdict;
}
