import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { actorOf } from '../../../platform/actor.js';
import { dataEnvelope, errorResponse, IdParams } from '../../../platform/schemas.js';
import { ForceQuery, ImpactConflictBody } from '../../graph/graph.schemas.js';
import { guardImpact, impactCheck } from '../../graph/impact/guard-impact.js';
import { DRIVERS } from '../protocols/protocol-registry.js';
import {
  CloneConnectionBody,
  Connection,
  ConnectionList,
  CreateConnectionBody,
  ListConnectionsQuery,
  ProtocolList,
  UpdateConnectionBody,
} from './connections.schemas.js';
import type { ConnectionsService } from './connections.service.js';

const read = { access: { scope: 'connectors:read' } };
const write = { access: { scope: 'connectors:write' } };
const tags = ['Connections'];

/** `/api/v1/connections`: connections of the organization and the protocols they speak. */
export const connectionsRoutes: FastifyPluginAsyncTypebox<{ connections: ConnectionsService }> = async (
  app,
  { connections },
) => {
  app.get(
    '/protocols',
    {
      config: read,
      schema: {
        tags,
        summary: 'List supported protocols',
        description:
          'Each protocol with its config JSON Schema (x-secret marks write-only fields) and its function types.',
        response: { 200: ProtocolList },
      },
    },
    async () => ({
      data: DRIVERS.map((d) => ({
        id: d.id,
        name: d.name,
        category: d.category,
        session: d.session,
        configSchema: d.configSchema,
        functionTypes: d.functionTypes.map((t) => ({ ...t })),
      })),
    }),
  );

  app.get(
    '/',
    {
      config: read,
      schema: {
        tags,
        summary: 'List connections',
        description: 'Filter by protocol, runtime state and label; search name and description; sort; page.',
        querystring: ListConnectionsQuery,
        response: { 200: ConnectionList },
      },
    },
    async (request) => {
      const { protocol, state, label, ...params } = request.query;
      return connections.list(request.organization!.id, { protocol, state, label }, params);
    },
  );

  app.post(
    '/',
    {
      config: write,
      schema: {
        tags,
        summary: 'Create a connection',
        description:
          "config is validated against the protocol's configSchema (400 names the field). A host written as an address the egress policy denies (loopback, localhost, link-local and cloud metadata, Meridian's own ports; MERIDIAN_EGRESS_ALLOW and MERIDIAN_EGRESS_DENY change it) answers 400 naming the field and the policy; a host name is checked when a session resolves it. With autoStart it starts at once.",
        body: CreateConnectionBody,
        response: {
          201: dataEnvelope(Connection),
          409: errorResponse('The name is taken in the organization.'),
        },
      },
    },
    async (request, reply) => {
      const row = await connections.create(request.organization!.id, request.body, actorOf(request));
      return reply.code(201).send({ data: connections.toConnection(row) });
    },
  );

  app.get(
    '/:id',
    {
      config: read,
      schema: {
        tags,
        summary: 'View a connection',
        params: IdParams,
        response: { 200: dataEnvelope(Connection) },
      },
    },
    async (request) => ({
      data: connections.toConnection(await connections.get(request.organization!.id, request.params.id)),
    }),
  );

  app.patch(
    '/:id',
    {
      config: write,
      schema: {
        tags,
        summary: 'Update a connection',
        description:
          'A given config replaces the stored one (secrets left out or sent as {"configured": true} are kept). A running connection reconnects with the new settings. ' +
          'A change to what is stored already (secrets included) writes nothing: no version, and no reconnect. ' +
          'A config whose host is an address the egress policy denies answers 400, as on create.',
        params: IdParams,
        body: UpdateConnectionBody,
        response: { 200: dataEnvelope(Connection) },
      },
    },
    async (request) => ({
      data: connections.toConnection(
        await connections.update(request.organization!.id, request.params.id, request.body, actorOf(request)),
      ),
    }),
  );

  app.delete(
    '/:id',
    {
      config: write,
      schema: {
        tags,
        summary: 'Delete a connection',
        description:
          'Stops it first; its functions and state history go with it. 409 with the `impact` while active entities depend on it, unless `force=true`.',
        params: IdParams,
        querystring: ForceQuery,
        response: { 204: Type.Null(), 409: { description: 'Others depend on it.', ...ImpactConflictBody } },
      },
    },
    async (request, reply) => {
      const ref = { type: 'connection', id: request.params.id } as const;
      // Before the running session is stopped; the check in the delete's transaction decides.
      await guardImpact(request, ref, 'delete', request.query.force);
      await connections.remove(
        request.organization!.id,
        request.params.id,
        actorOf(request),
        impactCheck(request, ref, 'delete', request.query.force),
      );
      return reply.code(204).send(null);
    },
  );

  app.post(
    '/:id/clone',
    {
      config: write,
      schema: {
        tags,
        summary: 'Clone a connection',
        description: 'A stopped copy with its functions and its secrets (which stay unreadable).',
        params: IdParams,
        body: Type.Optional(CloneConnectionBody),
        response: { 201: dataEnvelope(Connection) },
      },
    },
    async (request, reply) => {
      const row = await connections.clone(
        request.organization!.id,
        request.params.id,
        request.body?.name,
        actorOf(request),
      );
      return reply.code(201).send({ data: connections.toConnection(row) });
    },
  );
};
