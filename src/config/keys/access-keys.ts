import type { ConfigKeyDescriptor } from '../config-key.js';

/** Sign-in, sessions, tokens and the keys that sign and seal them. */
export const ACCESS_KEYS = {
  accessTokenTtl: {
    env: 'MERIDIAN_ACCESS_TOKEN_TTL',
    kind: 'integer',
    default: 3600,
    unit: 'seconds',
    min: 60,
    max: 86400,
    description: 'Lifetime of OAuth2 access tokens.',
  },
  refreshTokenTtl: {
    env: 'MERIDIAN_REFRESH_TOKEN_TTL',
    kind: 'integer',
    default: 2592000,
    unit: 'seconds',
    min: 300,
    max: 31536000,
    description: 'Lifetime of refresh tokens (each use rotates the token and keeps the grant).',
  },
  sessionTtl: {
    env: 'MERIDIAN_SESSION_TTL',
    kind: 'integer',
    default: 43200,
    unit: 'seconds',
    min: 300,
    max: 2592000,
    description: 'Lifetime of a console session.',
  },
  loginMaxFailures: {
    env: 'MERIDIAN_LOGIN_MAX_FAILURES',
    kind: 'integer',
    default: 5,
    min: 1,
    max: 1000,
    description: 'Failed logins allowed per account and client address within the login window before 429.',
  },
  loginWindow: {
    env: 'MERIDIAN_LOGIN_WINDOW',
    kind: 'integer',
    default: 900,
    unit: 'seconds',
    min: 1,
    max: 86400,
    description: 'Window over which failed logins are counted.',
  },
  trustProxy: {
    env: 'MERIDIAN_TRUST_PROXY',
    kind: 'proxy',
    default: false,
    description:
      'Proxies whose X-Forwarded-For is believed: false (none), a hop count (1 = one load balancer in front), or a comma-separated list of their addresses and CIDRs (10.0.0.0/8,192.168.1.10; also loopback, linklocal, uniquelocal). `true` is refused: it would believe any forged header.',
  },
  keyEncryptionKey: {
    env: 'MERIDIAN_KEY_ENCRYPTION_KEY',
    kind: 'secret',
    min: 32,
    description:
      'Key that encrypts signing keys at rest (at least 32 characters). Unset: a key file made in the data directory on first start; replicas must share it.',
  },
  idTokenTtl: {
    env: 'MERIDIAN_ID_TOKEN_TTL',
    kind: 'integer',
    default: 3600,
    unit: 'seconds',
    min: 60,
    max: 86400,
    description: 'Lifetime of OpenID Connect ID tokens.',
  },
  tokenRateLimitPerClient: {
    env: 'MERIDIAN_TOKEN_RATE_LIMIT_PER_CLIENT',
    kind: 'integer',
    default: 600,
    unit: 'requests per minute',
    min: 1,
    max: 100000000,
    description:
      'Authenticated token endpoint requests allowed per client per minute (per replica) before 429.',
  },
  tokenRateLimitPerAddress: {
    env: 'MERIDIAN_TOKEN_RATE_LIMIT_PER_ADDRESS',
    kind: 'integer',
    default: 1200,
    unit: 'requests per minute',
    min: 1,
    max: 100000000,
    description: 'Token endpoint requests allowed per client address per minute (per replica) before 429.',
  },
  patMaxPerUser: {
    env: 'MERIDIAN_PAT_MAX_PER_USER',
    kind: 'integer',
    default: 100,
    min: 1,
    max: 10000,
    description: 'Personal access tokens a user may hold that are neither revoked nor expired.',
  },
} as const satisfies Record<string, ConfigKeyDescriptor>;
