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

export type { TrustProxySetting } from '../platform/http/trust-proxy.js';

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
