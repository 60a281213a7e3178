import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { Kysely } from 'kysely';
import { Type } from 'typebox';
import { type Actor, actorOf } from '../../../platform/actor.js';
import type { Clock } from '../../../platform/clock.js';
import { notFound } from '../../../platform/errors.js';
import { dataEnvelope, errorResponse, IdParams, isoTime } from '../../../platform/schemas.js';
import type { Database } from '../../../storage/tables.js';
import { recordChange } from '../../audit/record-change.js';
import type { PipelinesRepository } from '../pipelines/pipelines.repository.js';
import type { WebhookSigning } from './webhook-signing.js';
import type { WebhookTokens } from './webhook-tokens.js';

export interface WebhookCredentialRouteDeps {
  db: Kysely<Database>;
  tokens: WebhookTokens;
  signing: WebhookSigning;
  pipelines: PipelinesRepository;
  clock: Clock;
  toleranceSeconds: number;
}

const TokenIssued = Type.Object({
  pipelineId: Type.String(),
  token: Type.String({ description: 'Shown this once; send it as the `X-Webhook-Token` header.' }),
  url: Type.String({ description: 'The webhook URL below which its nodes listen.' }),
  issuedAt: Type.String({ format: 'date-time' }),
});

const SecretIssued = Type.Object({
  pipelineId: Type.String(),
  secret: Type.String({
    description:
      'Shown this once. Sign each call: `X-Meridian-Timestamp: <seconds since the epoch>` and `X-Meridian-Signature: v1=<hex HMAC-SHA256 of "<timestamp>.<body>" with this secret>`.',
  }),
  issuedAt: Type.String({ format: 'date-time' }),
  toleranceSeconds: Type.Integer({ description: 'How far the timestamp may lie from the server clock.' }),
});

const WebhookStatus = Type.Object({
  pipelineId: Type.String(),
  url: Type.String(),
  token: Type.Object({ issued: Type.Boolean(), issuedAt: Type.Union([Type.String(), Type.Null()]) }),
  signing: Type.Object({
    enabled: Type.Boolean(),
    issuedAt: Type.Union([Type.String(), Type.Null()]),
    toleranceSeconds: Type.Integer(),
  }),
});

/** The audit entry of a change of signing: the secret, when there is one, only as `[secret]`. */
function auditSigning(
  db: Kysely<Database>,
  at: number,
  change: { organizationId: string; actor: Actor; pipelineId: string; secret: string | null },
) {
  return recordChange(db, at, {
    organizationId: change.organizationId,
    actor: change.actor,
    action: change.secret ? 'pipeline.webhook_signing_issued' : 'pipeline.webhook_signing_removed',
    targetType: 'pipeline',
    targetId: change.pipelineId,
    before: { webhookSigning: change.secret ? null : { enabled: true } },
    after: { webhookSigning: change.secret ? { enabled: true, signingSecret: change.secret } : null },
  });
}

/**
 * A pipeline's webhook credentials: `GET /engine/pipelines/{id}/webhook` (what is set up, never a
 * secret), `POST|DELETE .../webhook-token` (issue or rotate, and revoke, the token) and
 * `POST|DELETE .../webhook-signing-secret` (turn signed calls on with a new secret, and off). Each secret
 * is shown once and replaces the previous one at once.
 */
export const webhookCredentialRoutes: FastifyPluginAsyncTypebox<WebhookCredentialRouteDeps> = async (
  app,
  deps,
) => {
  const tags = ['Pipelines'];
  const pipelineOf = async (organizationId: string, id: string) => {
    const pipeline = await deps.pipelines.get(organizationId, id);
    if (!pipeline) throw notFound('pipeline');
    return pipeline;
  };

  app.post(
    '/:id/webhook-token',
    {
      config: { access: { scope: 'pipelines:write' } },
      schema: {
        tags,
        summary: "Issue the pipeline's webhook token",
        description:
          'A new secret for the `trigger.webhook` nodes of the pipeline, shown once; it replaces the previous one at once. Stored only as its hash.',
        params: IdParams,
        response: { 201: dataEnvelope(TokenIssued), 404: errorResponse('No such pipeline.') },
      },
    },
    async (request, reply) => {
      const organizationId = request.organization!.id;
      const pipeline = await pipelineOf(organizationId, request.params.id);
      const now = deps.clock.now();
      const token = await deps.tokens.issue(organizationId, pipeline.id, actorOf(request).userId, now);
      return reply.code(201).send({
        data: {
          pipelineId: pipeline.id,
          token,
          url: `/api/v1/engine/webhooks/${pipeline.id}`,
          issuedAt: isoTime(now),
        },
      });
    },
  );

  app.delete(
    '/:id/webhook-token',
    {
      config: { access: { scope: 'pipelines:write' } },
      schema: {
        tags,
        summary: "Revoke the pipeline's webhook token",
        description: 'Its webhooks answer 401 until a new token is issued.',
        params: IdParams,
        response: { 204: Type.Null(), 404: errorResponse('No such pipeline or no token.') },
      },
    },
    async (request, reply) => {
      if (!(await deps.tokens.revoke(request.organization!.id, request.params.id)))
        throw notFound('webhook token');
      return reply.code(204).send(null);
    },
  );

  app.get(
    '/:id/webhook',
    {
      config: { access: { scope: 'pipelines:read' } },
      schema: {
        tags,
        summary: "The pipeline's webhook: whether a token and signing are set up",
        description: 'Neither the token nor the signing secret is ever shown again after it was issued.',
        params: IdParams,
        response: { 200: dataEnvelope(WebhookStatus), 404: errorResponse('No such pipeline.') },
      },
    },
    async (request) => {
      const organizationId = request.organization!.id;
      const pipeline = await pipelineOf(organizationId, request.params.id);
      const tokenAt = await deps.tokens.issuedAt(organizationId, pipeline.id);
      const signingAt = await deps.signing.issuedAt(organizationId, pipeline.id);
      return {
        data: {
          pipelineId: pipeline.id,
          url: `/api/v1/engine/webhooks/${pipeline.id}`,
          token: { issued: tokenAt !== undefined, issuedAt: tokenAt === undefined ? null : isoTime(tokenAt) },
          signing: {
            enabled: signingAt !== undefined,
            issuedAt: signingAt === undefined ? null : isoTime(signingAt),
            toleranceSeconds: deps.toleranceSeconds,
          },
        },
      };
    },
  );

  app.post(
    '/:id/webhook-signing-secret',
    {
      config: { access: { scope: 'pipelines:write' } },
      schema: {
        tags,
        summary: "Issue the pipeline's webhook signing secret (turns signed calls on)",
        description:
          'From now on every call to the webhook must also be signed (401 otherwise): `X-Meridian-Timestamp` (seconds since the epoch, within `toleranceSeconds` of the server clock) and `X-Meridian-Signature: v1=<hex HMAC-SHA256 of "<timestamp>.<body>">`; each signature is accepted once. The secret is shown this once, stored sealed with the key-encryption key, never exported; issuing again replaces it at once.',
        params: IdParams,
        response: { 201: dataEnvelope(SecretIssued), 404: errorResponse('No such pipeline.') },
      },
    },
    async (request, reply) => {
      const organizationId = request.organization!.id;
      const pipeline = await pipelineOf(organizationId, request.params.id);
      const now = deps.clock.now();
      const actor = actorOf(request);
      const secret = await deps.signing.issue(organizationId, pipeline.id, actor.userId, now);
      await auditSigning(deps.db, now, { organizationId, actor, pipelineId: pipeline.id, secret });
      return reply.code(201).send({
        data: {
          pipelineId: pipeline.id,
          secret,
          issuedAt: isoTime(now),
          toleranceSeconds: deps.toleranceSeconds,
        },
      });
    },
  );

  app.delete(
    '/:id/webhook-signing-secret',
    {
      config: { access: { scope: 'pipelines:write' } },
      schema: {
        tags,
        summary: "Remove the pipeline's webhook signing secret (turns signed calls off)",
        description: 'Calls need only the token again.',
        params: IdParams,
        response: { 204: Type.Null(), 404: errorResponse('No such pipeline, or it does not sign.') },
      },
    },
    async (request, reply) => {
      const organizationId = request.organization!.id;
      const pipeline = await pipelineOf(organizationId, request.params.id);
      if (!(await deps.signing.revoke(organizationId, pipeline.id))) throw notFound('webhook signing secret');
      const actor = actorOf(request);
      await auditSigning(deps.db, deps.clock.now(), {
        organizationId,
        actor,
        pipelineId: pipeline.id,
        secret: null,
      });
      return reply.code(204).send(null);
    },
  );
};
