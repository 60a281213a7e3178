import { lookup as dnsLookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { networkInterfaces } from 'node:os';
import {
  type IpAddress,
  type IpRange,
  literalAddress,
  normalizeHost,
  parseAddress,
  parseRange,
} from './egress-addresses.js';
import { parseEgressList } from './egress-entries.js';
import { EgressDeniedError, type EgressTarget } from './egress-pinning.js';
import { type Backend, decideEgress, type EgressRules, type EgressVerdict } from './egress-rules.js';

/** Resolves a DNS name to every address it has (dns.lookup with `all`: /etc/hosts and DNS, as drivers would). */
export type LookupAll = (hostname: string) => Promise<readonly { address: string; family: number }[]>;

const systemLookup: LookupAll = (hostname) => dnsLookup(hostname, { all: true });

export interface EgressPolicyDeps {
  /** MERIDIAN_EGRESS_ALLOW and MERIDIAN_EGRESS_DENY entries (validated by the config loader). */
  allow: readonly string[];
  deny: readonly string[];
  /** The ports Meridian listens on now (HTTP, the embedded broker). */
  ownPorts: () => readonly number[];
  /** The servers Meridian itself uses: `{setting: 'DATABASE_URL', url}`, `{setting: 'MQTT_URL', url}`. */
  backends: readonly { setting: string; url: string | undefined }[];
  /** DNS; tests give one that answers names of their own. */
  lookup?: LookupAll | undefined;
}

/** Default ports of the backends' URL schemes. */
const SCHEME_PORTS: Record<string, number> = {
  'postgres:': 5432,
  'postgresql:': 5432,
  'mqtt:': 1883,
  'tcp:': 1883,
  'mqtts:': 8883,
  'ssl:': 8883,
  'ws:': 80,
  'wss:': 443,
};

/** Where this host's own ports are: loopback, the unspecified addresses, every interface's address. */
function localRanges(): IpRange[] {
  const ranges = ['127.0.0.0/8', '0.0.0.0/8', '::1/128', '::/128'].map(parseRange);
  for (const list of Object.values(networkInterfaces()))
    for (const info of list ?? []) {
      const address = parseAddress(info.address.split('%')[0]!);
      ranges.push([address, address.kind() === 'ipv4' ? 32 : 128]);
    }
  return ranges;
}

/** How long the backends' resolved addresses are kept before they are looked up again. */
const BACKEND_TTL_MS = 30_000;

/**
 * The egress policy of every outbound connection a connection opens (docs: README "Security notes").
 * `resolve` looks a host up once, checks every address it has and answers them for the connection to use
 * (egress-pinning.ts), so that a second lookup cannot take it elsewhere; `literalDenial` judges a host
 * written as an address (or `localhost`) without DNS, for refusing a configuration when it is saved.
 */
export class EgressPolicy {
  private readonly rules: EgressRules;
  private readonly lookup: LookupAll;
  private backendCache: { until: number; backends: Promise<Backend[]> } | undefined;

  constructor(private readonly deps: EgressPolicyDeps) {
    const allow = parseEgressList(deps.allow);
    const deny = parseEgressList(deps.deny);
    const problems = [...allow.problems, ...deny.problems];
    if (problems.length > 0) throw new Error(`invalid egress entries: ${problems.join('; ')}`);
    this.rules = { allow: allow.entries, deny: deny.entries };
    this.lookup = deps.lookup ?? systemLookup;
  }

  /** DATABASE_URL's and MQTT_URL's servers, looked up at most every 30 s (an unresolvable one is skipped). */
  private backends(): Promise<Backend[]> {
    const now = Date.now();
    if (this.backendCache && this.backendCache.until > now) return this.backendCache.backends;
    const backends = Promise.all(
      this.deps.backends.flatMap(({ setting, url }) => {
        if (!url) return [];
        const parsed = new URL(url);
        const host = normalizeHost(parsed.hostname);
        const port = Number(parsed.port) || SCHEME_PORTS[parsed.protocol] || 0;
        if (!host) return [];
        return [this.addressesOf(host).then((addresses) => ({ setting, addresses, port }))];
      }),
    );
    this.backendCache = { until: now + BACKEND_TTL_MS, backends };
    return backends;
  }

  private async addressesOf(host: string): Promise<IpAddress[]> {
    const literal = literalAddress(host);
    if (literal) return [parseAddress(literal.toString())];
    const found = await this.lookup(host).catch(() => []);
    return found.map((a) => parseAddress(a.address));
  }

  private async verdict(address: string, port: number, name: string | undefined): Promise<EgressVerdict> {
    const own = { ports: this.deps.ownPorts(), localRanges: localRanges(), backends: await this.backends() };
    return decideEgress(this.rules, own, { address: parseAddress(address), port, name });
  }

  /**
   * Looks `host` up once and checks every address it has (one denied address denies the name: a
   * round-robin answer cannot smuggle one in). Answers the target to connect to, pinned to those
   * addresses; throws EgressDeniedError naming the policy. DNS errors are the resolver's own.
   */
  async resolve(rawHost: string, port: number): Promise<EgressTarget> {
    const host = normalizeHost(rawHost);
    if (!host)
      throw new EgressDeniedError(
        `egress policy: "${rawHost.slice(0, 100)}" is not a host name or an IP address`,
      );
    const literal = literalAddress(host);
    const name = literal ? undefined : host;
    const addresses = literal
      ? [isIP(host) === 0 ? literal.toString() : host]
      : (await this.lookup(host)).map((a) => a.address);
    if (addresses.length === 0)
      throw Object.assign(new Error(`${host} has no address`), { code: 'ENOTFOUND' });
    for (const address of addresses) {
      const verdict = await this.verdict(address, port, name);
      if (!verdict.allowed) throw new EgressDeniedError(denialMessage(host, port, address, verdict));
    }
    return name ? { host, port, name, addresses } : { host, port, addresses };
  }

  /**
   * Why a host written as an address (IP literal in any form getaddrinfo takes) is denied at `port`;
   * for `localhost`, which RFC 6761 §6.3 reserves for loopback, why when neither 127.0.0.1 nor ::1 may be
   * reached (which one it is, only the lookup at connect time tells). `undefined` when allowed, or for a
   * name that only that lookup can judge.
   */
  async literalDenial(rawHost: string, port: number): Promise<string | undefined> {
    const host = normalizeHost(rawHost);
    if (!host) return undefined;
    const literal = literalAddress(host);
    if (literal) {
      const verdict = await this.verdict(literal.toString(), port, undefined);
      return verdict.allowed ? undefined : denialMessage(host, port, undefined, verdict);
    }
    if (host !== 'localhost' && !host.endsWith('.localhost')) return undefined;
    const [v4, v6] = [await this.verdict('127.0.0.1', port, host), await this.verdict('::1', port, host)];
    if (v4.allowed || v6.allowed) return undefined;
    return denialMessage(host, port, '127.0.0.1', v4);
  }
}

/** `egress policy: connections may not reach <host>:<port> [(resolves to <address>)] (<reason>); <hint>`. */
function denialMessage(
  host: string,
  port: number,
  address: string | undefined,
  verdict: Extract<EgressVerdict, { allowed: false }>,
): string {
  const where = isIP(host) === 6 ? `[${host}]:${port}` : `${host}:${port}`;
  const resolved = address && address !== host ? `: it resolves to ${address}` : '';
  return `egress policy: connections may not reach ${where}${resolved} (${verdict.reason})${verdict.hint ? `; ${verdict.hint}` : ''}`;
}

/**
 * The egress policy of a Meridian configured by `config`: MERIDIAN_EGRESS_ALLOW and _DENY, with
 * DATABASE_URL's and MQTT_URL's servers as its own. `ownPorts` answers the ports it listens on now.
 */
export function egressPolicyOf(
  config: { egressAllow: string[]; egressDeny: string[]; databaseUrl?: string; mqttUrl?: string },
  ownPorts: () => readonly number[],
  lookup?: LookupAll,
): EgressPolicy {
  return new EgressPolicy({
    allow: config.egressAllow,
    deny: config.egressDeny,
    ownPorts,
    backends: [
      { setting: 'DATABASE_URL', url: config.databaseUrl },
      { setting: 'MQTT_URL', url: config.mqttUrl },
    ],
    lookup,
  });
}
