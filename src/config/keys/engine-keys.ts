import type { ConfigKeyDescriptor } from '../config-key.js';

/** Pipelines: how many executions run at once, and what webhook triggers accept. */
export const ENGINE_KEYS = {
  engineConcurrency: {
    env: 'MERIDIAN_ENGINE_CONCURRENCY',
    kind: 'integer',
    default: 1000,
    min: 1,
    max: 1000,
    description:
      'Pipeline executions one replica runs at once (each pipeline also has its own limit); they mostly wait on devices, the database and the sandbox, so this is far above the number of cores.',
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
} as const satisfies Record<string, ConfigKeyDescriptor>;
