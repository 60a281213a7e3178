/** What a configuration key is: its variable, kind, default, unit and bounds. */
export type ConfigKind =
  | 'string'
  | 'port'
  | 'integer'
  | 'boolean'
  | 'url'
  | 'enum'
  | 'secret'
  | 'proxy'
  | 'egress';

/**
 * Which proxies' X-Forwarded-For is believed: `false` none, a number of hops (the client address is that
 * many entries from the right), or the proxies' addresses and CIDRs (Fastify's `trustProxy` takes each).
 */
export type TrustProxySetting = false | number | string[];

export interface ConfigKeyDescriptor<K extends ConfigKind = ConfigKind> {
  env: string;
  kind: K;
  description: string;
  /** Shown in docs; `undefined` means "unset". */
  default?: string | number | boolean;
  unit?: string;
  min?: number;
  max?: number;
  values?: readonly string[];
  /** URL schemes accepted for `url` keys. */
  schemes?: readonly string[];
}
