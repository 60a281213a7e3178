import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import type { Clock } from '../../../platform/clock.js';
import { conflict, notFound, rateLimited, unauthorized } from '../../../platform/errors.js';
import { emptyAwareJsonParser } from '../../../platform/http/json-body.js';
import { dataEnvelope, errorResponse, isoTime } from '../../../platform/schemas.js';
import { Execution, toExecution } from '../executions/executions.schemas.js';
import type { PipelineNode } from '../pipelines/pipeline-definition.js';
import type { PipelinesRepository } from '../pipelines/pipelines.repository.js';
import type { ExecutionsRepository } from '../queue/executions.repository.js';
import type { WebhookFailureLimits } from './webhook-limits.js';
import { SIGNATURE_HEADER, TIMESTAMP_HEADER, type WebhookSigning } from './webhook-signing.js';
import type { WebhookTokens } from './webhook-tokens.js';

/** The largest webhook body taken (413 beyond). */
export const WEBHOOK_BODY_LIMIT = 1024 * 1024;
/** Headers a webhook's trigger payload never records. */
const SECRET_HEADERS = new Set([
  'authorization',
  'cookie',
  'x-webhook-token',
  'proxy-authorization',
  SIGNATURE_HEADER,
]);

export interface WebhookDeps {
  tokens: WebhookTokens;
  signing: WebhookSigning;
  limits: WebhookFailureLimits;
  pipelines: PipelinesRepository;
  executions: ExecutionsRepository;
  clock: Clock;
  onQueued: () => void;
  /** 503 with Retry-After while the organization is in maintenance (organizations/maintenance). */
  maintenance: () => {
    skipReason(organizationId: string): Promise<string | null>;
    assertNotInMaintenance(organizationId: string): Promise<void>;
  } | null;
}

const WebhookParams = Type.Object({
  pipelineId: Type.String({ format: 'uuid' }),
  '*': Type.Optional(Type.String({ maxLength: 200 })),
});

const WebhookAccepted = Type.Object({
  executionId: Type.String(),
  status: Type.String(),
  execution: Type.Optional(Execution),
});

const FINAL = ['completed', 'completed_with_errors', 'failed', 'cancelled', 'skipped'];

/** The webhook node of `pipeline` listening for `method` on `path`, if any. */
function webhookNode(nodes: PipelineNode[], method: string, path: string): PipelineNode | undefined {
  return nodes.find(
    (n) =>
      n.type === 'trigger.webhook' &&
      !n.disabled &&
      ((n.parameters.method as string | undefined) ?? 'POST') === method &&
      ((n.parameters.path as string | undefined) ?? '') === path,
  );
}

/** `/api/v1/engine/webhooks/{pipelineId}/{path}`: starts pipelines from outside, with the pipeline's token. */
export const webhookRoutes: FastifyPluginAsyncTypebox<WebhookDeps> = async (app, deps) => {
  // The exact bytes of each body, for its signature: JSON and text are parsed here, from a buffer.
  const rawBodies = new WeakMap<FastifyRequest, Buffer>();
  const parseJson = emptyAwareJsonParser(app, (request, body) => rawBodies.set(request, body));
  app.removeContentTypeParser(['application/json', 'text/plain']);
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (request, body, done) =>
    parseJson(request, body as Buffer, done),
  );
  app.addContentTypeParser('text/plain', { parseAs: 'buffer' }, (request, body, done) => {
    rawBodies.set(request, body as Buffer);
    done(null, (body as Buffer).toString('utf8'));
  });
  const header = (request: FastifyRequest, name: string) => {
    const value = request.headers[name];
    return typeof value === 'string' ? value : undefined;
  };

  /** Why the call is not the pipeline's (token, then signature when it signs), or null. */
  const refusal = async (request: FastifyRequest, pipelineId: string): Promise<string | null> => {
    if (!(await deps.tokens.verify(pipelineId, header(request, 'x-webhook-token'))))
      return 'a valid X-Webhook-Token header is required';
    const call = {
      timestamp: header(request, TIMESTAMP_HEADER),
      signature: header(request, SIGNATURE_HEADER),
      body: rawBodies.get(request) ?? Buffer.alloc(0),
    };
    return deps.signing.check(pipelineId, call, deps.clock.now());
  };

  const handler = async (
    request: FastifyRequest<{ Params: { pipelineId: string; '*'?: string } }>,
    reply: import('fastify').FastifyReply,
  ) => {
    const { pipelineId } = request.params;
    const path = (request.params['*'] ?? '').replace(/\/+$/, '');
    const wait = deps.limits.retryAfter(pipelineId, request.ip);
    if (wait > 0) throw rateLimited(wait, 'too many failed calls to this webhook; try again later');
    const refused = await refusal(request, pipelineId);
    if (refused) {
      deps.limits.failed(pipelineId, request.ip);
      throw unauthorized(refused);
    }
    deps.limits.succeeded(pipelineId, request.ip);
    const pipeline = await deps.pipelines.byId(pipelineId);
    if (!pipeline) throw unauthorized('a valid X-Webhook-Token header is required');
    if (!pipeline.enabled) throw conflict('the pipeline is disabled');
    const node = webhookNode(pipeline.nodes, request.method, path);
    if (!node) throw notFound(`webhook ${request.method} ${path === '' ? '/' : path}`);
    const now = deps.clock.now();
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(request.headers))
      if (!SECRET_HEADERS.has(name) && typeof value === 'string') headers[name] = value;
    const input = {
      method: request.method,
      path,
      query: request.query ?? {},
      headers,
      body: request.body ?? null,
      receivedAt: isoTime(now),
    };
    const trigger = {
      type: 'webhook',
      nodeId: node.id,
      firedAt: now,
      source: { method: request.method, path },
    };
    const maintenance = deps.maintenance();
    const skipped = (await maintenance?.skipReason(pipeline.organizationId)) ?? null;
    if (skipped) {
      // Recorded, never lost silently; the caller is told when to come back.
      await deps.executions.enqueue({
        organizationId: pipeline.organizationId,
        pipeline,
        trigger,
        input,
        now,
        skippedBecause: skipped,
      });
      await maintenance!.assertNotInMaintenance(pipeline.organizationId);
    }
    const execution = await deps.executions.enqueue({
      organizationId: pipeline.organizationId,
      pipeline,
      trigger,
      input,
      now,
    });
    deps.onQueued();
    if (node.parameters.respond !== 'finished')
      return reply.code(202).send({ data: { executionId: execution.id, status: execution.status } });
    const until = Date.now() + Number(node.parameters.waitSeconds ?? 30) * 1000;
    for (;;) {
      const current = await deps.executions.get(pipeline.organizationId, execution.id);
      if (current && FINAL.includes(current.status))
        return reply.code(200).send({
          data: { executionId: current.id, status: current.status, execution: toExecution(current) },
        });
      if (Date.now() > until || request.socket.destroyed)
        return reply
          .code(202)
          .send({ data: { executionId: execution.id, status: current?.status ?? 'queued' } });
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  };

  const schema = {
    tags: ['Pipelines'],
    summary: 'Start a pipeline from its webhook',
    description:
      'Also answers below a path: `/api/v1/engine/webhooks/{pipelineId}/{path}` for a node with that `path`. Needs the pipeline\'s token in `X-Webhook-Token` (401 otherwise), and when the pipeline signs (`POST /engine/pipelines/{id}/webhook-signing-secret`) `X-Meridian-Timestamp` and `X-Meridian-Signature: v1=<hex HMAC-SHA256 of "<timestamp>.<body>">`, the timestamp within 5 minutes (MERIDIAN_WEBHOOK_SIGNATURE_TOLERANCE) and each signature once (401 for an unsigned, stale, future, wrong or replayed call). Failed calls are limited per pipeline and address (MERIDIAN_WEBHOOK_MAX_FAILURES in MERIDIAN_WEBHOOK_WINDOW): 429 `rate_limited` with Retry-After. The `trigger.webhook` node with this method and path starts an execution: 202 with its id, or with `respond: finished` 200 once it finished (202 if it did not within `waitSeconds`). A disabled pipeline: 409; no such webhook node: 404; a body over 1 MiB: 413. While the organization is in maintenance: 503 with Retry-After, and the call is recorded as a skipped execution with the reason `maintenance`.',
    params: WebhookParams,
    response: {
      200: dataEnvelope(WebhookAccepted),
      202: dataEnvelope(WebhookAccepted),
      401: { description: 'No valid X-Webhook-Token, or no valid signature.', $ref: 'UnauthorizedBody#' },
      404: errorResponse('No webhook node with this method and path.'),
      409: errorResponse('The pipeline is disabled.'),
      413: errorResponse('The body exceeds 1 MiB.'),
      429: errorResponse('Too many failed calls to this webhook (Retry-After).'),
      503: errorResponse('The organization is in maintenance (Retry-After).'),
    },
  };
  const options = {
    config: { access: { public: true as const } },
    bodyLimit: WEBHOOK_BODY_LIMIT,
    schema,
  };
  app.route({ method: ['POST', 'PUT', 'GET'], url: '/:pipelineId', ...options, handler });
  // The same below a path (`{pipelineId}/orders/new`); documented once, above.
  app.route({
    method: ['POST', 'PUT', 'GET'],
    url: '/:pipelineId/*',
    ...options,
    schema: { ...schema, hide: true },
    handler,
  });
};
