import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { actorOf } from '../../../platform/actor.js';
import { notFound } from '../../../platform/errors.js';
import { dataEnvelope, IdParams } from '../../../platform/schemas.js';
import type { ExecutionsRepository } from './executions.repository.js';
import {
  Execution,
  ExecutionList,
  ListExecutionsQuery,
  NodeRun,
  toExecution,
  toNodeRun,
} from './executions.schemas.js';
import type { ExecutionsService } from './executions.service.js';

const tags = ['Executions'];
const read = { access: { scope: 'pipelines:read' } };

/** `/api/v1/engine/executions`: the runs of pipelines and their node runs. */
export const executionsRoutes: FastifyPluginAsyncTypebox<{
  executions: ExecutionsRepository;
  service: ExecutionsService;
}> = async (app, { executions, service }) => {
  const write = { access: { scope: 'pipelines:write' } };
  const ErrorBody = Type.Object(
    { error: Type.String(), message: Type.String() },
    { additionalProperties: true },
  );
  const org = (request: { organization?: { id: string } | null }) => request.organization!.id;

  app.get(
    '/',
    {
      config: read,
      schema: {
        tags,
        summary: 'List executions, newest first',
        description: 'Filter by `pipelineId` and `status`.',
        querystring: ListExecutionsQuery,
        response: { 200: ExecutionList },
      },
    },
    async (request) => {
      const { rows, pagination } = await executions.list(org(request), request.query);
      return { data: rows.map(toExecution), pagination };
    },
  );

  app.get(
    '/:id',
    {
      config: read,
      schema: {
        tags,
        summary: 'View an execution',
        params: IdParams,
        response: { 200: dataEnvelope(Execution) },
      },
    },
    async (request) => {
      const execution = await executions.get(org(request), request.params.id);
      if (!execution) throw notFound('execution');
      return { data: toExecution(execution) };
    },
  );

  app.get(
    '/:id/nodes',
    {
      config: read,
      schema: {
        tags,
        summary: "An execution's node runs (inputs, outputs, attempts, durations)",
        description:
          "What is stored follows the pipeline's history detail; a failed run always keeps its input.",
        params: IdParams,
        response: { 200: Type.Object({ data: Type.Array(NodeRun) }) },
      },
    },
    async (request) => {
      const execution = await executions.get(org(request), request.params.id);
      if (!execution) throw notFound('execution');
      return { data: (await executions.nodeRuns(execution.id)).map(toNodeRun) };
    },
  );

  app.post(
    '/:id/retry',
    {
      config: write,
      schema: {
        tags,
        summary: 'Retry a failed, cancelled or partly failed execution',
        description:
          '`from-failed` (default) starts at the failed node with the input it failed on (upstream nodes do not run again); ' +
          '`from-start` runs the whole graph with the original input (or `input`). `version`: `original` (default) or `current`. ' +
          '409: not retryable in its status, already retried (unless `again: true`), or the current version is invalid.',
        params: IdParams,
        body: Type.Optional(
          Type.Object(
            {
              mode: Type.Optional(Type.Union([Type.Literal('from-failed'), Type.Literal('from-start')])),
              version: Type.Optional(Type.Union([Type.Literal('original'), Type.Literal('current')])),
              input: Type.Optional(Type.Unknown()),
              again: Type.Optional(Type.Boolean()),
            },
            { additionalProperties: false },
          ),
        ),
        response: { 201: dataEnvelope(Execution), 409: ErrorBody },
      },
    },
    async (request, reply) => {
      const retried = await service.retry(
        org(request),
        request.params.id,
        request.body ?? {},
        actorOf(request),
      );
      return reply.code(201).send({ data: toExecution(retried) });
    },
  );

  app.post(
    '/:id/cancel',
    {
      config: write,
      schema: {
        tags,
        summary: 'Cancel a queued or running execution',
        description: 'A running execution stops at its next node boundary. 409 for a finished one.',
        params: IdParams,
        response: { 202: dataEnvelope(Execution), 409: ErrorBody },
      },
    },
    async (request, reply) =>
      reply.code(202).send({ data: toExecution(await service.cancel(org(request), request.params.id)) }),
  );

  app.delete(
    '/:id',
    {
      config: write,
      schema: {
        tags,
        summary: 'Delete a finished execution with its node runs',
        params: IdParams,
        response: { 204: Type.Null(), 409: ErrorBody },
      },
    },
    async (request, reply) => {
      await service.delete(org(request), request.params.id);
      return reply.code(204).send(null);
    },
  );
};
