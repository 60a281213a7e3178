import { readFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { parseEgressList } from '../platform/egress/egress-entries.js';
import {
  CONFIG_KEYS,
  type Config,
  type ConfigKey,
  type ConfigKeyDescriptor,
  type TrustProxySetting,
} from './config.schema.js';

/** Thrown when the configuration is invalid; lists every problem at once. */
export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

type Source = Record<string, string | undefined>;

/**
 * Reads the configuration from environment variables, and from a JSON file named by `MERIDIAN_CONFIG_FILE`
 * (keys are the environment variable names; the environment wins). Validates every key and throws one
 * ConfigError that lists every problem.
 */
export function loadConfig(env: Source = process.env, overrides: Partial<Config> = {}): Config {
  const problems: string[] = [];
  const source: Source = { ...readConfigFile(env.MERIDIAN_CONFIG_FILE, problems), ...definedOnly(env) };
  const values: Record<string, unknown> = {};
  for (const [key, descriptor] of Object.entries(CONFIG_KEYS) as [ConfigKey, ConfigKeyDescriptor][]) {
    if (key in overrides) {
      values[key] = overrides[key];
      continue;
    }
    const raw = source[descriptor.env];
    if (raw === undefined || raw === '') {
      values[key] = descriptor.kind === 'egress' ? [] : descriptor.default;
      continue;
    }
    const parsed = parseValue(descriptor, raw.trim());
    if (typeof parsed === 'object' && parsed !== null && 'problem' in parsed && !Array.isArray(parsed))
      problems.push(...parsed.problem);
    else values[key] = parsed;
  }
  const topicPrefix = values.topicPrefix;
  if (typeof topicPrefix === 'string' && !/^[A-Za-z0-9_.-]{1,32}$/.test(topicPrefix)) {
    problems.push(
      `MERIDIAN_UNS_TOPIC_PREFIX must be 1 to 32 letters, digits, '.', '_' or '-' (got "${topicPrefix.slice(0, 40)}")`,
    );
  }
  if (problems.length > 0) throw new ConfigError(problems);
  const host =
    values.httpHost === '0.0.0.0' || values.httpHost === '::' ? 'localhost' : String(values.httpHost);
  const issuer = String(
    values.issuer ?? `http://${host.includes(':') ? `[${host}]` : host}:${values.httpPort}`,
  );
  values.issuer = issuer.replace(/\/+$/, '');
  return values as Config;
}

function definedOnly(env: Source): Source {
  const out: Source = {};
  for (const descriptor of Object.values(CONFIG_KEYS)) {
    if (env[descriptor.env] !== undefined) out[descriptor.env] = env[descriptor.env];
  }
  return out;
}

function readConfigFile(path: string | undefined, problems: string[]): Source {
  if (!path) return {};
  try {
    const parsed: unknown = JSON.parse(readFileSync(path, 'utf8'));
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
      problems.push(`MERIDIAN_CONFIG_FILE ${path} must hold a JSON object of environment variable names`);
      return {};
    }
    const known = new Set<string>(Object.values(CONFIG_KEYS).map((d) => d.env));
    const out: Source = {};
    for (const [name, value] of Object.entries(parsed)) {
      if (!known.has(name)) problems.push(`MERIDIAN_CONFIG_FILE ${path}: unknown key ${name}`);
      else out[name] = String(value);
    }
    return out;
  } catch (error) {
    problems.push(`MERIDIAN_CONFIG_FILE ${path} cannot be read: ${(error as Error).message}`);
    return {};
  }
}

/** Names proxy-addr (Fastify's trustProxy) accepts for well-known ranges. */
const PROXY_RANGE_NAMES = new Set(['loopback', 'linklocal', 'uniquelocal']);

/**
 * MERIDIAN_TRUST_PROXY: false, a hop count, or addresses and CIDRs. `true` is refused by name: Fastify
 * would then take the leftmost X-Forwarded-For entry, which the client writes, and every per-address
 * limit could be escaped by rotating it.
 */
function parseTrustProxy(d: ConfigKeyDescriptor, raw: string): TrustProxySetting | { problem: string } {
  const lower = raw.toLowerCase();
  if (['false', '0', 'no', 'off'].includes(lower)) return false;
  if (['true', 'yes', 'on'].includes(lower)) {
    return {
      problem:
        `${d.env}=${raw} would trust any X-Forwarded-For a client sends; give the number of proxies in front ` +
        'of Meridian (e.g. 1) or their addresses/CIDRs (e.g. 10.0.0.0/8,192.168.1.10)',
    };
  }
  if (/^\d+$/.test(raw)) {
    const hops = Number(raw);
    if (hops > 32) return { problem: `${d.env} hop count must be between 0 and 32 (got ${hops})` };
    return hops;
  }
  const entries = raw.split(',').map((entry) => entry.trim());
  for (const entry of entries) {
    if (!isTrustedProxyEntry(entry)) {
      return {
        problem:
          `${d.env} must be false, a hop count, or comma-separated addresses/CIDRs ` +
          `(got "${entry.slice(0, 40)}")`,
      };
    }
  }
  return entries;
}

function isTrustedProxyEntry(entry: string): boolean {
  if (PROXY_RANGE_NAMES.has(entry)) return true;
  const [address, prefix, ...rest] = entry.split('/');
  if (rest.length > 0 || !address) return false;
  const family = isIP(address);
  if (family === 0) return false;
  if (prefix === undefined) return true;
  if (!/^\d{1,3}$/.test(prefix)) return false;
  return Number(prefix) <= (family === 4 ? 32 : 128);
}

/**
 * MERIDIAN_EGRESS_ALLOW / MERIDIAN_EGRESS_DENY: comma-separated entries (egress-entries.ts), each bad one
 * reported on its own.
 */
function parseEgress(d: ConfigKeyDescriptor, raw: string): string[] | { problem: string[] } {
  const { entries, problems } = parseEgressList(raw);
  if (problems.length > 0) return { problem: problems.map((p) => `${d.env}: ${p}`) };
  return entries.map((e) => e.text);
}

function parseValue(
  d: ConfigKeyDescriptor,
  raw: string,
): string | number | boolean | string[] | { problem: string[] } {
  const fail = (why: string) => ({ problem: [`${d.env} ${why}`] });
  switch (d.kind) {
    case 'proxy': {
      const setting = parseTrustProxy(d, raw);
      return typeof setting === 'object' && 'problem' in setting ? { problem: [setting.problem] } : setting;
    }
    case 'egress':
      return parseEgress(d, raw);
    case 'port':
    case 'integer': {
      if (!/^-?\d+$/.test(raw)) return fail(`must be a whole number (got "${raw.slice(0, 40)}")`);
      const n = Number(raw);
      const min = d.kind === 'port' ? 0 : (d.min ?? Number.MIN_SAFE_INTEGER);
      const max = d.kind === 'port' ? 65535 : (d.max ?? Number.MAX_SAFE_INTEGER);
      if (n < min || n > max)
        return fail(`must be between ${min} and ${max}${d.unit ? ` ${d.unit}` : ''} (got ${n})`);
      return n;
    }
    case 'boolean':
      if (['true', '1', 'yes', 'on'].includes(raw.toLowerCase())) return true;
      if (['false', '0', 'no', 'off'].includes(raw.toLowerCase())) return false;
      return fail(`must be true or false (got "${raw.slice(0, 40)}")`);
    case 'enum':
      if (d.values?.includes(raw)) return raw;
      return fail(`must be one of ${d.values?.join(', ')} (got "${raw.slice(0, 40)}")`);
    case 'url': {
      let url: URL;
      try {
        url = new URL(raw);
      } catch {
        return fail('must be an absolute URL');
      }
      if (d.schemes && !d.schemes.includes(url.protocol))
        return fail(`must use one of ${d.schemes.join(' ')}`);
      return raw;
    }
    case 'secret':
      if (d.min && raw.length < d.min) return fail(`must be at least ${d.min} characters`);
      return raw;
    default:
      return raw;
  }
}
