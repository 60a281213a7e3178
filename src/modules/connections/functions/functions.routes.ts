import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { actorOf } from '../../../platform/actor.js';
import { dataEnvelope, errorResponse, IdParams } from '../../../platform/schemas.js';
import { ForceQuery, ImpactConflictBody } from '../../graph/graph.schemas.js';
import { impactCheck } from '../../graph/impact/guard-impact.js';
import {
  ConnectorFunction,
  CreateFunctionBody,
  ExecuteBody,
  ExecutionResult,
  FunctionList,
  FunctionParams,
  ImportFunctionsBody,
  ListFunctionsQuery,
  PreviewBody,
  UpdateFunctionBody,
} from './functions.schemas.js';
import type { FunctionsService } from './functions.service.js';

const read = { access: { scope: 'connectors:read' } };
const write = { access: { scope: 'connectors:write' } };
const tags = ['Functions'];

/** `/api/v1/connections/{id}/functions`: saved read, write and subscribe operations, and execute. */
export const functionsRoutes: FastifyPluginAsyncTypebox<{ functions: FunctionsService }> = async (
  app,
  { functions },
) => {
  app.get(
    '/:id/functions',
    {
      config: read,
      schema: {
        tags,
        summary: 'List the functions of a connection',
        params: IdParams,
        querystring: ListFunctionsQuery,
        response: { 200: FunctionList },
      },
    },
    async (request) => {
      const { type, ...params } = request.query;
      return functions.list(request.organization!.id, request.params.id, type, params);
    },
  );

  app.post(
    '/:id/functions',
    {
      config: write,
      schema: {
        tags,
        summary: 'Create a function',
        description:
          'Every ((placeholder)) in config must be declared in parameters and every declaration used (400 otherwise).',
        params: IdParams,
        body: CreateFunctionBody,
        response: {
          201: dataEnvelope(ConnectorFunction),
          409: errorResponse('The name is taken in the connection.'),
        },
      },
    },
    async (request, reply) =>
      reply.code(201).send({
        data: await functions.create(
          request.organization!.id,
          request.params.id,
          request.body,
          actorOf(request),
        ),
      }),
  );

  app.post(
    '/:id/functions/import',
    {
      config: write,
      schema: {
        tags,
        summary: 'Import functions from JSON or CSV',
        description:
          'All or nothing: one bad row answers 400 listing the bad rows (1-based), and nothing is created.',
        params: IdParams,
        body: ImportFunctionsBody,
        response: { 201: Type.Object({ data: Type.Array(ConnectorFunction) }) },
      },
    },
    async (request, reply) =>
      reply.code(201).send({
        data: await functions.import(
          request.organization!.id,
          request.params.id,
          request.body,
          actorOf(request),
        ),
      }),
  );

  app.get(
    '/:id/functions/:functionId',
    {
      config: read,
      schema: {
        tags,
        summary: 'View a function',
        params: FunctionParams,
        response: { 200: dataEnvelope(ConnectorFunction) },
      },
    },
    async (request) => {
      const { connection, row } = await functions.get(
        request.organization!.id,
        request.params.id,
        request.params.functionId,
      );
      return { data: functions.toFunction(row, connection.protocol) };
    },
  );

  app.patch(
    '/:id/functions/:functionId',
    {
      config: write,
      schema: {
        tags,
        summary: 'Update a function',
        description:
          'A new version, with `version` the one it was based on (stale: 409). A change to what is stored already writes nothing: 200 with the function as it is.',
        params: FunctionParams,
        body: UpdateFunctionBody,
        response: { 200: dataEnvelope(ConnectorFunction) },
      },
    },
    async (request) => ({
      data: await functions.update(
        request.organization!.id,
        request.params.id,
        request.params.functionId,
        request.body,
        actorOf(request),
      ),
    }),
  );

  app.delete(
    '/:id/functions/:functionId',
    {
      config: write,
      schema: {
        tags,
        summary: 'Delete a function',
        description: '409 with the `impact` while active pipelines depend on it, unless `force=true`.',
        params: FunctionParams,
        querystring: ForceQuery,
        response: { 204: Type.Null(), 409: { description: 'Others depend on it.', ...ImpactConflictBody } },
      },
    },
    async (request, reply) => {
      await functions.remove(
        request.organization!.id,
        request.params.id,
        request.params.functionId,
        actorOf(request),
        impactCheck(
          request,
          { type: 'function', id: request.params.functionId },
          'delete',
          request.query.force,
        ),
      );
      return reply.code(204).send(null);
    },
  );

  app.post(
    '/:id/functions/:functionId/clone',
    {
      config: write,
      schema: {
        tags,
        summary: 'Clone a function',
        description: 'The copy has no uns target (so a value is not published twice).',
        params: FunctionParams,
        body: Type.Optional(
          Type.Object(
            { name: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })) },
            { additionalProperties: false },
          ),
        ),
        response: { 201: dataEnvelope(ConnectorFunction) },
      },
    },
    async (request, reply) =>
      reply.code(201).send({
        data: await functions.clone(
          request.organization!.id,
          request.params.id,
          request.params.functionId,
          request.body?.name,
          actorOf(request),
        ),
      }),
  );

  app.post(
    '/:id/functions/:functionId/execute',
    {
      config: write,
      schema: {
        tags,
        summary: 'Execute a function',
        description:
          'Runs it now on the running session, or on a session opened for this call. A write needs confirmWrites: true and a connection that is not read-only (409). Never retried: a failure answers success false with the error.',
        params: FunctionParams,
        body: Type.Optional(ExecuteBody),
        response: {
          200: dataEnvelope(ExecutionResult),
          409: errorResponse('A write on a read-only connection.'),
        },
      },
    },
    async (request) => ({
      data: await functions.execute(
        request.organization!.id,
        request.params.id,
        request.params.functionId,
        request.body ?? {},
      ),
    }),
  );

  app.post(
    '/:id/functions/preview',
    {
      config: write,
      schema: {
        tags,
        summary: 'Preview a read function without saving it',
        description:
          "Runs a read function's `{type, config}` once on the running session, or on a session opened for this call, and answers what it read; nothing is saved. Only read types: a write or subscribe type answers 400, so a preview never changes a device. The config is checked as a create checks it (400 naming the field); ((placeholders)) are refused. A device failure answers success false with the error.",
        params: IdParams,
        body: PreviewBody,
        response: { 200: dataEnvelope(ExecutionResult) },
      },
    },
    async (request) => ({
      data: await functions.preview(request.organization!.id, request.params.id, request.body),
    }),
  );
};
