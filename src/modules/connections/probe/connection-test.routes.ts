import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { dataEnvelope } from '../../../platform/schemas.js';
import type { FailureReason } from '../drivers/driver.js';
import { type ConnectionTestDeps, MAX_TEST_MS, testConnection } from './connection-test.js';

const FAILURE_REASONS = [
  'host_not_found',
  'connection_refused',
  'timed_out',
  'host_unreachable',
  'security_rejected',
  'authentication_failed',
  'egress_denied',
  'configuration',
  'device',
  'transport',
] as const satisfies readonly FailureReason[];

const TestConnectionBody = Type.Object(
  {
    protocol: Type.String({
      minLength: 1,
      maxLength: 100,
      description: 'A protocol id of GET /connections/protocols.',
    }),
    config: Type.Record(Type.String(), Type.Unknown(), {
      description:
        "The config as a create takes it, secrets given in full (they are used for this session only: never stored, never logged). Validated against the protocol's configSchema: 400 names the field.",
    }),
  },
  { additionalProperties: false },
);

const TestConnectionResult = Type.Object({
  success: Type.Boolean(),
  durationMs: Type.Number({ description: 'How long opening (and closing) the session took.' }),
  error: Type.Union([Type.String(), Type.Null()], {
    description:
      'What went wrong, as a person reads it: `host not found: ...`, `connection refused: ...`, `timed out: ...`, `host unreachable: ...`, `security rejected: ...`, `authentication failed: ...`; null on success.',
  }),
  reason: Type.Union(
    [Type.Unsafe<FailureReason>({ type: 'string', enum: [...FAILURE_REASONS] }), Type.Null()],
    { description: 'The same as a stable code; null on success.' },
  ),
});

/** `POST /api/v1/connections/test`: a session opened with settings not saved, then closed. */
export const connectionTestRoutes: FastifyPluginAsyncTypebox<ConnectionTestDeps> = async (app, deps) => {
  app.post(
    '/test',
    {
      config: { access: { scope: 'connectors:write' } },
      schema: {
        tags: ['Connections'],
        summary: 'Test connection settings before saving them',
        description: `Opens a session with \`{protocol, config}\` and closes it at once; stores nothing and runs no function (a read-only session: only the handshake reaches the device). Answers 200 whether the session opened or not: \`success\`, \`durationMs\` and an \`error\` a person understands with its \`reason\`. The same checks as a create: the config against the protocol's configSchema and an address the egress policy denies as written answer 400; a host name is resolved and checked against the egress policy when the session opens (a denial answers success false, reason egress_denied). The wait is the config's timeoutMs (default 10 s), at most ${MAX_TEST_MS / 1000} s. Needs what creating a connection needs (connectors:write, Editor or above).`,
        body: TestConnectionBody,
        response: { 200: dataEnvelope(TestConnectionResult) },
      },
    },
    async (request) => ({ data: await testConnection(request.body.protocol, request.body.config, deps) }),
  );
};
