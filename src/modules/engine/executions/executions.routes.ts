import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { actorOf } from '../../../platform/actor.js';
import { badRequest, notFound, withDetails } from '../../../platform/errors.js';
import { dataEnvelope, IdParams } from '../../../platform/schemas.js';
import type { ExecutionsRepository } from '../queue/executions.repository.js';
import {
  Execution,
  ExecutionList,
  ExecutionStats,
  IterationsQuery,
  ListExecutionsQuery,
  NodeRunList,
  NodeRunsQuery,
  StatsQuery,
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
  /** `from` and `to` as milliseconds (400 naming the parameter when not a time). */
  const window = (query: { from?: string | undefined; to?: string | undefined }) => {
    const at = (name: 'from' | 'to') => {
      const text = query[name];
      if (text === undefined) return undefined;
      const ms = Date.parse(text);
      if (Number.isNaN(ms))
        throw withDetails(badRequest(`/${name}: must be an ISO 8601 date-time`), { path: `/${name}` });
      return ms;
    };
    return { from: at('from'), to: at('to') };
  };
  const executionOf = async (request: { organization?: { id: string } | null }, id: string) => {
    const execution = await executions.get(org(request), id);
    if (!execution) throw notFound('execution');
    return execution;
  };

  app.get(
    '/',
    {
      config: read,
      schema: {
        tags,
        summary: 'List executions, newest first',
        description:
          'Filter by `pipelineId`, `status`, `trigger` (type) and the time it was queued (`from` inclusive, `to` exclusive); paged.',
        querystring: ListExecutionsQuery,
        response: { 200: ExecutionList },
      },
    },
    async (request) => {
      const { rows, pagination } = await executions.list(org(request), {
        ...request.query,
        ...window(request.query),
      });
      return { data: rows.map(toExecution), pagination };
    },
  );

  app.get(
    '/stats',
    {
      config: read,
      schema: {
        tags,
        summary: 'Execution statistics',
        description:
          'Counts by status, the success rate and durations of the executions matching the filters (as for the list).',
        querystring: StatsQuery,
        response: { 200: dataEnvelope(ExecutionStats) },
      },
    },
    async (request) => ({
      data: await executions.stats(org(request), { ...request.query, ...window(request.query) }),
    }),
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
    async (request) => ({ data: toExecution(await executionOf(request, request.params.id)) }),
  );

  app.get(
    '/:id/nodes',
    {
      config: read,
      schema: {
        tags,
        summary: "An execution's node runs (inputs, outputs, attempts, durations, iterations), paged",
        description:
          "In the order they ran; `nodeId` keeps one node's runs. What is stored follows the pipeline's history detail; " +
          'a failed run always keeps its input. A node inside a for-each has one run per iteration.',
        params: IdParams,
        querystring: NodeRunsQuery,
        response: { 200: NodeRunList },
      },
    },
    async (request) => {
      const execution = await executionOf(request, request.params.id);
      const { rows, pagination } = await executions.nodeRunsPage(execution.id, request.query);
      return { data: rows.map(toNodeRun), pagination };
    },
  );

  app.get(
    '/:id/nodes/:nodeId/iterations',
    {
      config: read,
      schema: {
        tags,
        summary: "A node's runs in for-each iterations, paged",
        description:
          'Each with its `iteration` index (and `iterationKey` for nested loops), in the order they ran.',
        params: Type.Object({
          id: Type.String({ format: 'uuid' }),
          nodeId: Type.String({ minLength: 1, maxLength: 64 }),
        }),
        querystring: IterationsQuery,
        response: { 200: NodeRunList },
      },
    },
    async (request) => {
      const execution = await executionOf(request, request.params.id);
      if (!execution.definition.nodes.some((n) => n.id === request.params.nodeId)) throw notFound('node');
      const { rows, pagination } = await executions.nodeRunsPage(execution.id, {
        ...request.query,
        nodeId: request.params.nodeId,
        inLoop: true,
      });
      return { data: rows.map(toNodeRun), pagination };
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
          '409: not retryable in its status, already retried (unless `again: true`), or the current version is invalid. ' +
          '400 `/confirmWrites`: it would run a node that writes to a device. From the failed node is refused (409) when ' +
          'that node ran inside a for-each loop: retry from-start.',
        params: IdParams,
        body: Type.Optional(
          Type.Object(
            {
              mode: Type.Optional(Type.Union([Type.Literal('from-failed'), Type.Literal('from-start')])),
              version: Type.Optional(Type.Union([Type.Literal('original'), Type.Literal('current')])),
              input: Type.Optional(Type.Unknown()),
              again: Type.Optional(Type.Boolean()),
              confirmWrites: Type.Optional(
                Type.Boolean({
                  description: 'Required when the retry would run a node that writes to a device.',
                }),
              ),
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
        summary: 'Cancel a queued, waiting or running execution',
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
