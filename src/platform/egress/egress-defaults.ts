import { type IpRange, parseRange } from './egress-addresses.js';

/** A range denied unless MERIDIAN_EGRESS_ALLOW covers it, with the reason an error names. */
export interface DefaultDenial {
  cidr: string;
  range: IpRange;
  reason: string;
}

/**
 * What no connection reaches by default, each for a reason an attacker with an Editor role would use it.
 * The first range that matches names the reason, so the narrower ones come first. Private ranges
 * (10/8, 172.16/12, 192.168/16, fc00::/7, 100.64/10), where plants keep their PLCs, stay allowed.
 * IPv4-mapped IPv6 addresses (`::ffff:127.0.0.1`) are compared as the IPv4 address they map, and the
 * IPv4 address inside a NAT64 (`64:ff9b::/96`) or 6to4 (`2002::/16`) address is checked too.
 */
const DENIED: readonly [cidr: string, reason: string][] = [
  // "This network": a connection to 0.0.0.0 reaches the host itself on Linux.
  ['0.0.0.0/8', 'the unspecified address, which reaches this host'],
  // The host's own services, bound to loopback because they trust whatever comes from it.
  ['127.0.0.0/8', 'loopback'],
  // Link-local, where every major cloud serves instance metadata and credentials (169.254.169.254:
  // AWS, GCP, Azure, Oracle, OpenStack, DigitalOcean; 169.254.170.2 AWS ECS task credentials).
  ['169.254.0.0/16', 'link-local, where clouds serve instance metadata'],
  // Alibaba Cloud's metadata service, inside the otherwise allowed shared range 100.64/10.
  ['100.100.100.200/32', 'the Alibaba Cloud metadata service'],
  // Azure's host endpoint (WireServer: the VM agent's channel, DNS, health), a public address.
  ['168.63.129.16/32', 'the Azure host endpoint (WireServer)'],
  // IETF protocol assignments, never a device; holds Oracle Cloud's older metadata address 192.0.0.192.
  ['192.0.0.0/24', 'an IETF protocol assignment (Oracle Cloud metadata at 192.0.0.192)'],
  ['224.0.0.0/4', 'multicast'],
  // Reserved, and the limited broadcast address 255.255.255.255.
  ['240.0.0.0/4', 'reserved or broadcast'],
  ['::/128', 'the unspecified address, which reaches this host'],
  ['::1/128', 'loopback'],
  // Deprecated IPv4-compatible addresses (::a.b.c.d): never a device.
  ['::/96', 'an IPv4-compatible address (deprecated)'],
  ['fe80::/10', 'link-local'],
  // AWS's IPv6 services: instance metadata fd00:ec2::254, EKS Pod Identity fd00:ec2::23, DNS, NTP.
  ['fd00:ec2::/32', 'the AWS instance metadata service (IPv6)'],
  // Google Cloud's metadata server over IPv6.
  ['fd20:ce::254/128', 'the Google Cloud metadata service (IPv6)'],
  ['ff00::/8', 'multicast'],
];

/** The default denials, parsed once. */
export const DEFAULT_DENIALS: readonly DefaultDenial[] = DENIED.map(([cidr, reason]) => ({
  cidr,
  range: parseRange(cidr),
  reason,
}));
