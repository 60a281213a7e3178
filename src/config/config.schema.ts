/**
 * Every configuration key Meridian reads, with its description, default and unit.
 * The environment variable names are fixed by DESIGN.md: scripts and deployments depend on them.
 */
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

export const CONFIG_KEYS = {
  httpHost: {
    env: 'MERIDIAN_HTTP_HOST',
    kind: 'string',
    default: '0.0.0.0',
    description: 'Address the HTTP server listens on.',
  },
  httpPort: {
    env: 'MERIDIAN_HTTP_PORT',
    kind: 'port',
    default: 8080,
    description: 'HTTP port (0 picks a free port).',
  },
  mqttPort: {
    env: 'MERIDIAN_MQTT_PORT',
    kind: 'port',
    default: 1883,
    description: 'Port of the embedded MQTT broker; 0 disables it.',
  },
  dataDir: {
    env: 'MERIDIAN_DATA_DIR',
    kind: 'string',
    default: './data',
    description: 'Directory for the embedded SQLite database and key files.',
  },
  databaseUrl: {
    env: 'DATABASE_URL',
    kind: 'url',
    schemes: ['postgres:', 'postgresql:'],
    description: 'PostgreSQL connection URL. Unset: SQLite in the data directory.',
  },
  mqttUrl: {
    env: 'MQTT_URL',
    kind: 'url',
    schemes: ['mqtt:', 'mqtts:', 'tcp:', 'ssl:', 'ws:', 'wss:'],
    description: 'External MQTT broker URL. Unset: the embedded broker.',
  },
  issuer: {
    env: 'MERIDIAN_ISSUER',
    kind: 'url',
    schemes: ['http:', 'https:'],
    description: 'Public base URL of this instance (OAuth2 issuer). Default: http://<host>:<port>.',
  },
  adminEmail: {
    env: 'MERIDIAN_ADMIN_EMAIL',
    kind: 'string',
    default: 'admin@localhost',
    description: 'E-mail of the administrator created on first start.',
  },
  adminPassword: {
    env: 'MERIDIAN_ADMIN_PASSWORD',
    kind: 'secret',
    min: 12,
    description:
      'Password of the administrator created on first start (at least 12 characters, not a common or trivial one, zxcvbn strength 3 of 4 or more). Unset: generated and printed once.',
  },
  topicPrefix: {
    env: 'MERIDIAN_UNS_TOPIC_PREFIX',
    kind: 'string',
    default: 'v1',
    description: 'Version prefix: the first segment of every UNS topic.',
  },
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
  logLevel: {
    env: 'MERIDIAN_LOG_LEVEL',
    kind: 'enum',
    default: 'info',
    values: ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'],
    description: 'Log level of the JSON logs on standard output.',
  },
  bodyLimit: {
    env: 'MERIDIAN_BODY_LIMIT',
    kind: 'integer',
    default: 1048576,
    unit: 'bytes',
    min: 1024,
    max: 268435456,
    description: 'Largest request body accepted; larger bodies get 413.',
  },
  batchBodyLimit: {
    env: 'MERIDIAN_BATCH_BODY_LIMIT',
    kind: 'integer',
    default: 16777216,
    unit: 'bytes',
    min: 1024,
    max: 1073741824,
    description: 'Largest body accepted by batch publish.',
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
  webhookMaxFailures: {
    env: 'MERIDIAN_WEBHOOK_MAX_FAILURES',
    kind: 'integer',
    default: 10,
    min: 1,
    max: 100000,
    description:
      'Failed webhook calls (wrong token or signature) allowed per pipeline and client address within the webhook window before 429 (per replica); ten times as many per pipeline from all addresses, and per address across pipelines.',
  },
  webhookWindow: {
    env: 'MERIDIAN_WEBHOOK_WINDOW',
    kind: 'integer',
    default: 60,
    unit: 'seconds',
    min: 1,
    max: 86400,
    description: 'Window over which failed webhook calls are counted.',
  },
  webhookSignatureTolerance: {
    env: 'MERIDIAN_WEBHOOK_SIGNATURE_TOLERANCE',
    kind: 'integer',
    default: 300,
    unit: 'seconds',
    min: 10,
    max: 3600,
    description:
      "How far a signed webhook call's X-Meridian-Timestamp may lie from the server's clock, either way; a signature is accepted once within it.",
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
  shutdownTimeout: {
    env: 'MERIDIAN_SHUTDOWN_TIMEOUT',
    kind: 'integer',
    default: 10,
    unit: 'seconds',
    min: 1,
    max: 600,
    description: 'How long a graceful shutdown waits for in-flight requests.',
  },
  unsRetentionDays: {
    env: 'MERIDIAN_UNS_RETENTION_DAYS',
    kind: 'integer',
    default: 0,
    unit: 'days',
    min: 0,
    max: 36500,
    description:
      'How long the historian keeps values, by declared timestamp; 0 keeps them forever. PostgreSQL drops whole daily partitions; SQLite deletes rows.',
  },
  unsCommitWindow: {
    env: 'MERIDIAN_UNS_COMMIT_WINDOW',
    kind: 'integer',
    default: 0,
    unit: 'milliseconds',
    min: 0,
    max: 1000,
    description:
      'Group commit: how long a publish waits for others to share its transaction. 0: commit at once when no commit is running; publishes arriving meanwhile share the next one.',
  },
  unsCommitMaxRecords: {
    env: 'MERIDIAN_UNS_COMMIT_MAX_RECORDS',
    kind: 'integer',
    default: 20000,
    min: 1,
    max: 1000000,
    description: 'Group commit: most records one shared transaction takes (a batch publish is never split).',
  },
  unsCommitConcurrency: {
    env: 'MERIDIAN_UNS_COMMIT_CONCURRENCY',
    kind: 'integer',
    default: 1,
    min: 1,
    max: 16,
    description:
      'Group commit on PostgreSQL: shared transactions in flight at once (SQLite has one writer: always 1). One lets each commit take everything that arrived during the last; raise it where PostgreSQL has cores to spare and its commit latency, not its CPU, limits publishing.',
  },
  unsFutureTolerance: {
    env: 'MERIDIAN_UNS_FUTURE_TOLERANCE',
    kind: 'integer',
    default: 300,
    unit: 'seconds',
    min: 0,
    max: 31536000,
    description:
      'Largest amount a declared timestamp may lie in the future; later ones are refused (400), so a device with a wrong clock cannot pin the latest value.',
  },
  mqttNamespace: {
    env: 'MERIDIAN_MQTT_NAMESPACE',
    kind: 'string',
    default: 'meridian',
    description:
      'With MQTT_URL: the root under which Meridian namespaces each organization on the external broker (<namespace>/<organization id>/<topic>).',
  },
  unsStreamMax: {
    env: 'MERIDIAN_UNS_STREAM_MAX',
    kind: 'integer',
    default: 1000,
    min: 1,
    max: 100000,
    description:
      'Live value streams (GET /api/v1/uns/data/stream) one process serves at once; beyond it a new stream is answered 503 with Retry-After.',
  },
  unsStreamMaxPerCredential: {
    env: 'MERIDIAN_UNS_STREAM_MAX_PER_CREDENTIAL',
    kind: 'integer',
    default: 20,
    min: 1,
    max: 100000,
    description:
      'Live value streams one credential (token, PAT or console session) may hold open on one process; beyond it a new stream is answered 429 with Retry-After.',
  },
  unsStreamMaxPerOrganization: {
    env: 'MERIDIAN_UNS_STREAM_MAX_PER_ORGANIZATION',
    kind: 'integer',
    default: 200,
    min: 1,
    max: 100000,
    description:
      'Live value streams one organization may hold open on one process; beyond it a new stream is answered 429 with Retry-After.',
  },
  unsStreamHeartbeat: {
    env: 'MERIDIAN_UNS_STREAM_HEARTBEAT',
    kind: 'integer',
    default: 15,
    unit: 'seconds',
    min: 1,
    max: 3600,
    description:
      'How often an idle live value stream sends a keep-alive comment, so that proxies and load balancers keep it open.',
  },
  unsStreamRecheck: {
    env: 'MERIDIAN_UNS_STREAM_RECHECK',
    kind: 'integer',
    default: 5,
    unit: 'seconds',
    min: 1,
    max: 300,
    description:
      'How often an open live value stream checks again that its credential is valid and still grants uns:read (user, role and organization changes are also applied at once).',
  },
  mqttSessionRecheck: {
    env: 'MERIDIAN_MQTT_SESSION_RECHECK',
    kind: 'integer',
    default: 2,
    unit: 'seconds',
    min: 1,
    max: 300,
    description:
      'How often an open MQTT connection of the embedded broker checks again that its credential is valid (revocation, expiry); user, role, membership and organization changes are applied at once. A connection whose access is gone is closed.',
  },
  engineConcurrency: {
    env: 'MERIDIAN_ENGINE_CONCURRENCY',
    kind: 'integer',
    default: 1000,
    min: 1,
    max: 1000,
    description:
      'Pipeline executions one replica runs at once (each pipeline also has its own limit); they mostly wait on devices, the database and the sandbox, so this is far above the number of cores.',
  },
  egressAllow: {
    env: 'MERIDIAN_EGRESS_ALLOW',
    kind: 'egress',
    description:
      "Where connections may go that the egress policy denies by default: comma-separated CIDRs (10.0.0.0/8, fd00::/8), addresses, host names, *.names, each with an optional :port (127.0.0.1:5020, [::1]:4840, plc.lab:502). An entry without a port lifts the default denials (loopback, link-local and cloud metadata, the hosts of DATABASE_URL and MQTT_URL) for its addresses; Meridian's own ports and the ports of DATABASE_URL's and MQTT_URL's servers only for an entry that names the port. Unset: only the defaults.",
  },
  egressDeny: {
    env: 'MERIDIAN_EGRESS_DENY',
    kind: 'egress',
    description:
      'Where no connection may go, over MERIDIAN_EGRESS_ALLOW and the private ranges the policy allows by default: the same forms as MERIDIAN_EGRESS_ALLOW (e.g. 10.20.0.0/16 for an office network, or 192.168.1.10:22).',
  },
  databasePoolSize: {
    env: 'MERIDIAN_DATABASE_POOL_SIZE',
    kind: 'integer',
    default: 10,
    min: 1,
    max: 500,
    description: 'PostgreSQL connection pool size per replica.',
  },
} as const satisfies Record<string, ConfigKeyDescriptor>;

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
