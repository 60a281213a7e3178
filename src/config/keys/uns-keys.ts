import type { ConfigKeyDescriptor } from '../config-key.js';

/** The unified namespace: historian commits and retention, live streams and MQTT sessions. */
export const UNS_KEYS = {
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
  unsCompress: {
    env: 'MERIDIAN_UNS_COMPRESS',
    kind: 'boolean',
    default: true,
    description:
      'Runs the historian compaction job (one replica at a time, on a thread of its own): complete UTC days of each topic whose end is older than MERIDIAN_UNS_COMPRESS_AFTER become compressed segments (a few bytes a value); every reader merges them with rows. false keeps every value a row.',
  },
  unsCompressAfter: {
    env: 'MERIDIAN_UNS_COMPRESS_AFTER',
    kind: 'integer',
    default: 3600,
    unit: 'seconds',
    min: 0,
    max: 31536000,
    description:
      'How old values must be (by declared timestamp) before compaction may take them: a UTC day is compressed once its end is this far in the past.',
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
  sparkplugLease: {
    env: 'MERIDIAN_SPARKPLUG_LEASE',
    kind: 'integer',
    default: 15,
    unit: 'seconds',
    min: 2,
    max: 300,
    description:
      'With MQTT_URL: how long the `sparkplug-host` lease lasts without renewal (renewed every third of it). When its holder dies, another replica becomes the Sparkplug host (primary host STATE, edge nodes) within about this time plus a renewal; shorter means a quicker takeover and more database writes.',
  },
} as const satisfies Record<string, ConfigKeyDescriptor>;
