import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';

/** An IPv4 or IPv6 address as ipaddr.js parses it. */
export type IpAddress = ipaddr.IPv4 | ipaddr.IPv6;

/** An address range: an address and its prefix length. */
export type IpRange = [IpAddress, number];

/** One label of a DNS name: letters, digits, `_` and `-`, not starting or ending with `-` (RFC 1123 §2.1). */
const LABEL = /^[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?$/;

/**
 * A host as Meridian compares it: lower-case, without the brackets of an IPv6 literal or a DNS name's
 * final dot. `undefined` when it is neither an IP address nor a DNS name (a Unix socket path that pg would
 * open, a space, a scheme): such a host is never connected to.
 */
export function normalizeHost(host: string): string | undefined {
  let h = host.trim().toLowerCase();
  if (h.startsWith('[') && h.endsWith(']')) h = h.slice(1, -1);
  if (isIP(h) !== 0) return h;
  if (h.endsWith('.')) h = h.slice(0, -1);
  if (h.length === 0 || h.length > 253) return undefined;
  return h.split('.').every((label) => LABEL.test(label)) ? h : undefined;
}

/**
 * The address a host literally names, also in the forms inet_aton and so getaddrinfo accept (`127.1`,
 * `2130706433`, `0x7f.1`, `0177.0.0.1`), which a driver's own lookup would turn into that address.
 * `undefined` for a DNS name.
 */
export function literalAddress(host: string): IpAddress | undefined {
  if (isIP(host) !== 0 || ipaddr.IPv4.isValid(host)) return ipaddr.parse(host);
  return undefined;
}

/** Parses an address; an IPv4-mapped IPv6 address (`::ffff:127.0.0.1`) becomes the IPv4 address it maps. */
export function parseAddress(text: string): IpAddress {
  return ipaddr.process(text);
}

/** Whether `address` lies in `range` (an IPv4 address never lies in an IPv6 range, nor the reverse). */
export function inRange(address: IpAddress, range: IpRange): boolean {
  return address.kind() === range[0].kind() && address.match(range);
}

/**
 * Parses a CIDR (`10.0.0.0/8`, `fd00::/8`); a range of IPv4-mapped IPv6 addresses (`::ffff:10.0.0.0/104`)
 * becomes the IPv4 range it maps, as addresses are compared after that mapping too.
 */
export function parseRange(cidr: string): IpRange {
  const [address, bits] = ipaddr.parseCIDR(cidr);
  if (address.kind() === 'ipv6' && bits >= 96 && (address as ipaddr.IPv6).isIPv4MappedAddress())
    return [(address as ipaddr.IPv6).toIPv4Address(), bits - 96];
  return [address, bits];
}

/** Whether a CIDR is well formed: four-part decimal IPv4 or IPv6, and a prefix length within its size. */
export function isCidr(text: string): boolean {
  const [address] = text.split('/');
  return isIP(address ?? '') !== 0 && ipaddr.isValidCIDR(text);
}

/**
 * The IPv4 address an IPv6 address carries for a translator (RFC 6052 NAT64 `64:ff9b::/96`, RFC 3056
 * 6to4 `2002::/16`): a gateway on the way would connect to it, so it is checked as well.
 */
export function embeddedIpv4(address: IpAddress): ipaddr.IPv4 | undefined {
  if (address.kind() !== 'ipv6') return undefined;
  const parts = (address as ipaddr.IPv6).parts;
  const word = (hi: number, lo: number) => new ipaddr.IPv4([hi >> 8, hi & 0xff, lo >> 8, lo & 0xff]);
  if (parts[0] === 0x64 && parts[1] === 0xff9b && parts.slice(2, 6).every((p) => p === 0))
    return word(parts[6]!, parts[7]!);
  if (parts[0] === 0x2002) return word(parts[1]!, parts[2]!);
  return undefined;
}
