import type { ConfigKeyDescriptor } from '../config-key.js';

/** Where Meridian listens and keeps its data, the first start, logging and request sizes. */
export const SERVER_KEYS = {
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
  shutdownTimeout: {
    env: 'MERIDIAN_SHUTDOWN_TIMEOUT',
    kind: 'integer',
    default: 10,
    unit: 'seconds',
    min: 1,
    max: 600,
    description: 'How long a graceful shutdown waits for in-flight requests.',
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
