import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { actorOf } from '../../platform/actor.js';
import { dataEnvelope, IdParams } from '../../platform/schemas.js';
import { CreatedPersonalAccessToken, CreatePatBody, ListPatsQuery, PatList } from './tokens.schemas.js';
import type { TokensService } from './tokens.service.js';

const tags = ['Personal access tokens'];

/** `/api/v1/oauth2/tokens`: the caller's own personal access tokens. */
export const tokensRoutes: FastifyPluginAsyncTypebox<{ tokens: TokensService }> = async (app, { tokens }) => {
  const caller = (request: { principal: { userId: string } | null }) => request.principal!.userId;

  app.get(
    '/',
    {
      config: { access: { scope: 'tokens:read' } },
      schema: {
        tags,
        summary: 'List your personal access tokens',
        description: 'Filter by status, search by name, sort by name, createdAt, expiresAt or lastUsedAt.',
        querystring: ListPatsQuery,
        response: { 200: PatList },
      },
    },
    async (request) => tokens.list(caller(request), request.query),
  );

  app.post(
    '/',
    {
      config: { access: { scope: 'tokens:write' } },
      schema: {
        tags,
        summary: 'Create a personal access token',
        description:
          'Only with a console session or another personal access token; an OAuth2 access token is refused ' +
          "(403). Every scope must be one you may use (from a PAT: one it carries). The token value is in this response only. A PAT acts with its user's access: a deactivated " +
          'user or a lowered role applies on its next use. Send it as `Authorization: Bearer mrd_pat_...`.',
        body: CreatePatBody,
        response: { 201: dataEnvelope(CreatedPersonalAccessToken) },
      },
    },
    async (request, reply) => {
      const actor = { ...actorOf(request), userId: caller(request) };
      const created = await tokens.create(
        request.body,
        request.grantedScopes,
        actor,
        request.principal!.credential,
      );
      reply.header('cache-control', 'no-store');
      return reply.code(201).send({ data: created });
    },
  );

  app.delete(
    '/:id',
    {
      config: { access: { scope: 'tokens:write' } },
      schema: {
        tags,
        summary: 'Revoke a personal access token',
        description: 'The token stops working at once; it stays listed with status revoked.',
        params: IdParams,
        response: { 204: Type.Null() },
      },
    },
    async (request, reply) => {
      await tokens.revoke(request.params.id, { ...actorOf(request), userId: caller(request) });
      return reply.code(204).send(null);
    },
  );
};
