import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { actorOf } from '../../../platform/actor.js';
import { dataEnvelope, IdParams } from '../../../platform/schemas.js';
import {
  Client,
  ClientList,
  ListClientsQuery,
  RegisterClientBody,
  RegisteredClient,
  UpdateClientBody,
} from './clients.schemas.js';
import { type ClientsService, toClient } from './clients.service.js';

const admin = { access: { scope: 'system:admin', systemAdmin: true } };
const tags = ['OAuth2 clients'];

/** `/api/v1/oauth2/clients`: OAuth2 client management for System Administrators. */
export const clientsRoutes: FastifyPluginAsyncTypebox<{ clients: ClientsService }> = async (
  app,
  { clients },
) => {
  app.get(
    '/',
    {
      config: admin,
      schema: {
        tags,
        summary: 'List OAuth2 clients',
        description:
          'Filter by status, search name, client ID and description, sort by name, createdAt or updatedAt.',
        querystring: ListClientsQuery,
        response: { 200: ClientList },
      },
    },
    async (request) => clients.list(request.query),
  );

  app.post(
    '/',
    {
      config: admin,
      schema: {
        tags,
        summary: 'Register an OAuth2 client',
        description:
          'A new client is active. A confidential client receives its `clientSecret` in this response only; ' +
          'it is stored as a hash and cannot be retrieved again (if lost, delete the client and register it again).',
        body: RegisterClientBody,
        response: { 201: dataEnvelope(RegisteredClient) },
      },
    },
    async (request, reply) => {
      const { client, clientSecret } = await clients.register(
        request.body,
        actorOf(request),
        request.organization?.id ?? null,
      );
      reply.header('cache-control', 'no-store');
      return reply
        .code(201)
        .send({ data: clientSecret ? { ...toClient(client), clientSecret } : toClient(client) });
    },
  );

  app.get(
    '/:id',
    {
      config: admin,
      schema: {
        tags,
        summary: 'View an OAuth2 client',
        params: IdParams,
        response: { 200: dataEnvelope(Client) },
      },
    },
    async (request) => ({ data: toClient(await clients.get(request.params.id)) }),
  );

  app.patch(
    '/:id',
    {
      config: admin,
      schema: {
        tags,
        summary: 'Edit an OAuth2 client',
        params: IdParams,
        body: UpdateClientBody,
        response: { 200: dataEnvelope(Client) },
      },
    },
    async (request) => ({
      data: toClient(await clients.update(request.params.id, request.body, actorOf(request))),
    }),
  );

  for (const [action, status, summary] of [
    [
      'disable',
      'disabled',
      'Disable an OAuth2 client: new token requests are refused; issued tokens stay valid',
    ],
    ['enable', 'active', 'Enable an OAuth2 client'],
  ] as const) {
    app.post(
      `/:id/${action}`,
      {
        config: admin,
        schema: { tags, summary, params: IdParams, response: { 200: dataEnvelope(Client) } },
      },
      async (request) => ({
        data: toClient(await clients.setStatus(request.params.id, status, actorOf(request))),
      }),
    );
  }

  app.delete(
    '/:id',
    {
      config: admin,
      schema: {
        tags,
        summary: 'Delete an OAuth2 client',
        description:
          'Permanent. Its access tokens, refresh tokens, authorization codes and consents stop working at once.',
        params: IdParams,
        response: { 204: Type.Null() },
      },
    },
    async (request, reply) => {
      await clients.remove(request.params.id, actorOf(request));
      return reply.code(204).send(null);
    },
  );
};
