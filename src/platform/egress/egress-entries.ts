import { isIP } from 'node:net';
import {
  type IpAddress,
  type IpRange,
  inRange,
  isCidr,
  normalizeHost,
  parseAddress,
  parseRange,
} from './egress-addresses.js';

/** What an entry of MERIDIAN_EGRESS_ALLOW or MERIDIAN_EGRESS_DENY matches. */
export type EgressMatch =
  | { kind: 'range'; range: IpRange }
  | { kind: 'name'; name: string }
  /** `*.lab.example`: every name under it, not the name itself. */
  | { kind: 'suffix'; suffix: string };

/** One entry: an address, a CIDR, a host name or `*.` name suffix, each optionally with a port. */
export interface EgressEntry {
  /** As written, for messages. */
  text: string;
  match: EgressMatch;
  /** Only this port; absent: every port. */
  port?: number;
}

const PORT = /^\d{1,5}$/;

function portOf(text: string): number | undefined {
  if (!PORT.test(text)) return undefined;
  const port = Number(text);
  return port >= 1 && port <= 65535 ? port : undefined;
}

/** An address or CIDR written alone or inside brackets. */
function addressMatch(text: string): EgressMatch | undefined {
  if (text.includes('/')) return isCidr(text) ? { kind: 'range', range: parseRange(text) } : undefined;
  if (isIP(text) === 0) return undefined;
  const address: IpAddress = parseAddress(text);
  return { kind: 'range', range: [address, address.kind() === 'ipv4' ? 32 : 128] };
}

/** A host name, or `*.` and a name. All-numeric names are refused: they read as (mistyped) addresses. */
function nameMatch(text: string): EgressMatch | undefined {
  const wildcard = text.startsWith('*.');
  const name = normalizeHost(wildcard ? text.slice(2) : text);
  if (!name || isIP(name) !== 0 || /^[0-9.]+$/.test(name) || name.includes('*')) return undefined;
  return wildcard ? { kind: 'suffix', suffix: name } : { kind: 'name', name };
}

/**
 * Parses one entry: `10.0.0.0/8`, `fd00::/8`, `10.0.0.5`, `10.0.0.5:502`, `[fd00::5]:502`, `plc.lab`,
 * `plc.lab:4840`, `*.lab.example`. Answers the entry, or why it is not one.
 */
export function parseEgressEntry(raw: string): EgressEntry | { problem: string } {
  const text = raw.trim();
  const bad = (why: string) => ({ problem: `"${text.slice(0, 80)}" ${why}` });
  if (text.startsWith('[')) {
    const close = text.indexOf(']');
    const inner = close < 0 ? undefined : addressMatch(text.slice(1, close));
    if (inner?.kind !== 'range' || inner.range[0].kind() !== 'ipv6')
      return bad('is not an IPv6 address or range in brackets ([fd00::5]:502)');
    const rest = text.slice(close + 1);
    if (rest === '') return { text, match: inner };
    const port = rest.startsWith(':') ? portOf(rest.slice(1)) : undefined;
    return port ? { text, match: inner, port } : bad('has no port from 1 to 65535 after the brackets');
  }
  const address = addressMatch(text);
  if (address) return { text, match: address };
  if (text.includes('/')) return bad('is not a CIDR (10.0.0.0/8, fd00::/8); a range takes no port');
  if (isIP(text) === 0 && text.includes('::'))
    return bad('is not an IPv6 address; with a port write it in brackets ([fd00::5]:502)');
  const colon = text.lastIndexOf(':');
  const host = colon < 0 ? text : text.slice(0, colon);
  const port = colon < 0 ? undefined : portOf(text.slice(colon + 1));
  if (colon >= 0 && port === undefined) return bad('has no port from 1 to 65535 after the colon');
  const match = (isIP(host) === 4 ? addressMatch(host) : undefined) ?? nameMatch(host);
  if (!match)
    return bad('is neither an address, a CIDR, a host name nor *.name (each with an optional :port)');
  return port === undefined ? { text, match } : { text, match, port };
}

/** Parses a comma-separated list; empty items (a trailing comma) are skipped. Answers every bad entry. */
export function parseEgressList(raw: string | readonly string[]): {
  entries: EgressEntry[];
  problems: string[];
} {
  const items = typeof raw === 'string' ? raw.split(',') : raw;
  const entries: EgressEntry[] = [];
  const problems: string[] = [];
  for (const item of items) {
    if (item.trim() === '') continue;
    const parsed = parseEgressEntry(item);
    if ('problem' in parsed) problems.push(parsed.problem);
    else entries.push(parsed);
  }
  return { entries, problems };
}

/** Whether an entry covers a connection target: its address (under any name) or the name it was given by. */
export function entryMatches(entry: EgressEntry, address: IpAddress, name: string | undefined): boolean {
  const { match } = entry;
  if (match.kind === 'range') return inRange(address, match.range);
  if (name === undefined) return false;
  if (match.kind === 'name') return name === match.name;
  return name.endsWith(`.${match.suffix}`);
}
