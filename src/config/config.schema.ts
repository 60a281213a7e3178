/**
 * Every configuration key Meridian reads, with its description, default and unit, by area (keys/).
 * The environment variable names are fixed by DESIGN.md: scripts and deployments depend on them.
 */
import type { TrustProxySetting } from './config-key.js';
import { ACCESS_KEYS } from './keys/access-keys.js';
import { CONNECTION_KEYS } from './keys/connections-keys.js';
import { ENGINE_KEYS } from './keys/engine-keys.js';
import { SERVER_KEYS } from './keys/server-keys.js';
import { UNS_KEYS } from './keys/uns-keys.js';

export type { ConfigKeyDescriptor, ConfigKind, TrustProxySetting } from './config-key.js';

export const CONFIG_KEYS = {
  ...SERVER_KEYS,
  ...ACCESS_KEYS,
  ...UNS_KEYS,
  ...ENGINE_KEYS,
  ...CONNECTION_KEYS,
};

export type ConfigKey = keyof typeof CONFIG_KEYS;

type ValueOf<D> = D extends { kind: 'proxy' }
  ? TrustProxySetting
  : D extends { kind: 'egress' }
    ? string[]
    : D extends { kind: 'port' | 'integer' }
      ? number
      : D extends { kind: 'boolean' }
        ? boolean
        : D extends { kind: 'enum'; values: readonly (infer V)[] }
          ? V
          : string;

/** A key with a default always has a value; an egress list is empty when unset. */
type Resolved<D> = D extends { default: unknown } | { kind: 'egress' } ? ValueOf<D> : ValueOf<D> | undefined;

/** The validated configuration, one camelCase property per key. `issuer` is always resolved. */
export type Config = { [K in ConfigKey]: Resolved<(typeof CONFIG_KEYS)[K]> } & { issuer: string };
