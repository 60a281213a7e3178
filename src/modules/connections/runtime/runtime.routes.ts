import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { actorOf } from '../../../platform/actor.js';
import { dataEnvelope, IdParams, Timestamp } from '../../../platform/schemas.js';
import { ForceQuery, ImpactConflictBody } from '../../graph/graph.schemas.js';
import { impactCheck } from '../../graph/impact/guard-impact.js';
import { ChangeReason, RuntimeStateSchema } from '../connections/connections.schemas.js';
import type { ConnectionsService } from '../connections/connections.service.js';
import type { ConnectionSupervisor } from './supervisor.js';

const read = { access: { scope: 'connectors:read' } };
const write = { access: { scope: 'connectors:write' } };
const tags = ['Runtime'];

const Runtime = Type.Object(
  {
    connectionId: Type.String({ format: 'uuid' }),
    state: RuntimeStateSchema,
    since: Timestamp,
    lastError: Type.Union([Type.String(), Type.Null()]),
    ownerReplica: Type.Union([Type.String(), Type.Null()], { description: 'The replica that runs it.' }),
    desiredState: Type.Union([Type.Literal('running'), Type.Literal('stopped')]),
    metrics: Type.Object({
      requests: Type.Integer(),
      errors: Type.Integer(),
      timeouts: Type.Integer(),
      reconnects: Type.Integer(),
      valuesPublished: Type.Integer(),
      publishErrors: Type.Integer(),
      latencyMs: Type.Object({
        p50: Type.Union([Type.Number(), Type.Null()]),
        p95: Type.Union([Type.Number(), Type.Null()]),
      }),
    }),
  },
  { $id: 'ConnectionRuntime' },
);

/** Start, stop, restart and runtime status of connections. */
export const runtimeRoutes: FastifyPluginAsyncTypebox<{
  connections: ConnectionsService;
  supervisor: ConnectionSupervisor;
}> = async (app, { connections, supervisor }) => {
  app.get(
    '/runtime',
    {
      config: read,
      schema: {
        tags,
        summary: 'List the runtimes of all connections',
        querystring: Type.Object(
          { state: Type.Optional(RuntimeStateSchema) },
          { additionalProperties: false },
        ),
        response: { 200: Type.Object({ data: Type.Array(Runtime) }) },
      },
    },
    async (request) => {
      const { data } = await connections.list(
        request.organization!.id,
        { state: request.query.state },
        { limit: 200 },
      );
      const views = await Promise.all(
        data.map(async (c) => supervisor.runtimeOf(await connections.get(request.organization!.id, c.id))),
      );
      return { data: views };
    },
  );

  app.get(
    '/:id/runtime',
    {
      config: read,
      schema: {
        tags,
        summary: 'Runtime status and metrics of a connection',
        params: IdParams,
        response: { 200: dataEnvelope(Runtime) },
      },
    },
    async (request) => ({
      data: await supervisor.runtimeOf(await connections.get(request.organization!.id, request.params.id)),
    }),
  );

  for (const [action, summary, description] of [
    [
      'start',
      'Start a connection',
      'Sets the desired state to running (kept across restarts); idempotent. 202 with the runtime.',
    ],
    ['stop', 'Stop a connection', 'Sets the desired state to stopped and closes the session; idempotent.'],
    ['restart', 'Restart a connection', 'Closes the session and opens a new one.'],
  ] as const) {
    app.post(
      `/:id/${action}`,
      {
        config: write,
        // The body is optional: a start without one (as before reasons) validates as {}.
        preValidation: async (request) => {
          request.body ??= {};
        },
        schema: {
          tags,
          summary,
          description:
            action === 'stop'
              ? `${description} Recorded in the audit log with the reason given. 409 with the \`impact\` while active entities depend on it, unless \`force=true\`.`
              : `${description} Recorded in the audit log with the reason given.`,
          params: IdParams,
          ...(action === 'stop' ? { querystring: ForceQuery } : {}),
          body: Type.Optional(
            Type.Object({ reason: Type.Optional(ChangeReason) }, { additionalProperties: false }),
          ),
          response: {
            202: dataEnvelope(Runtime),
            ...(action === 'stop'
              ? { 409: { description: 'Others depend on it.', ...ImpactConflictBody } }
              : {}),
          },
        },
      },
      async (request, reply) => {
        const connection = await connections.get(request.organization!.id, request.params.id);
        const { force } = request.query as { force?: boolean };
        await connections.recordRuntimeAction(
          request.organization!.id,
          connection.id,
          action,
          actorOf(request),
          request.body?.reason,
          action === 'stop' && connection.desired_state === 'running'
            ? impactCheck(request, { type: 'connection', id: connection.id }, 'stop', force)
            : undefined,
        );
        if (action === 'start') await supervisor.startConnection(connection.id);
        else if (action === 'stop') await supervisor.stopConnection(connection.id);
        else await supervisor.restartConnection(connection.id);
        const after = await connections.get(request.organization!.id, connection.id);
        return reply.code(202).send({ data: await supervisor.runtimeOf(after) });
      },
    );
  }
};
