import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { actorOf } from '../../../platform/actor.js';
import { dataEnvelope, IdParams, Timestamp } from '../../../platform/schemas.js';
import type { FoldersService } from './folders.service.js';

const tags = ['Dashboards'];
const read = { access: { scope: 'dashboards:read' } };
const write = { access: { scope: 'dashboards:write' } };

const Folder = Type.Object({
  id: Type.String({ format: 'uuid' }),
  name: Type.String(),
  parentId: Type.Union([Type.String(), Type.Null()]),
  dashboardCount: Type.Integer({ description: 'Dashboards directly in this folder.' }),
  createdAt: Timestamp,
  createdBy: Type.Union([Type.String(), Type.Null()]),
  updatedAt: Timestamp,
  updatedBy: Type.Union([Type.String(), Type.Null()]),
});

const Name = Type.String({ minLength: 1, maxLength: 100, description: 'Unique among its siblings.' });
const ParentId = Type.Union([Type.String({ format: 'uuid' }), Type.Null()], {
  description: 'The folder it sits in; null at the top.',
});

/** `/api/v1/uns/dashboards/folders`: nested dashboard folders. */
export const foldersRoutes: FastifyPluginAsyncTypebox<{ folders: FoldersService }> = async (
  app,
  { folders },
) => {
  const org = (request: { organization: { id: string } | null }) => request.organization!.id;

  app.get(
    '/',
    {
      config: read,
      schema: {
        tags,
        summary: 'List dashboard folders',
        description: 'Every folder of the organization by name; build the tree from parentId.',
        response: { 200: dataEnvelope(Type.Array(Folder)) },
      },
    },
    async (request) => ({ data: await folders.list(org(request)) }),
  );

  app.post(
    '/',
    {
      config: write,
      schema: {
        tags,
        summary: 'Create a dashboard folder',
        body: Type.Object({ name: Name, parentId: Type.Optional(ParentId) }, { additionalProperties: false }),
        response: { 201: dataEnvelope(Folder) },
      },
    },
    async (request, reply) =>
      reply.code(201).send({ data: await folders.create(org(request), request.body, actorOf(request)) }),
  );

  app.get(
    '/:id',
    {
      config: read,
      schema: {
        tags,
        summary: 'View a dashboard folder',
        params: IdParams,
        response: { 200: dataEnvelope(Folder) },
      },
    },
    async (request) => ({ data: await folders.get(org(request), request.params.id) }),
  );

  app.patch(
    '/:id',
    {
      config: write,
      schema: {
        tags,
        summary: 'Rename or move a dashboard folder',
        params: IdParams,
        body: Type.Object(
          { name: Type.Optional(Name), parentId: Type.Optional(ParentId) },
          { additionalProperties: false },
        ),
        response: { 200: dataEnvelope(Folder) },
      },
    },
    async (request) => ({
      data: await folders.update(org(request), request.params.id, request.body, actorOf(request)),
    }),
  );

  app.delete(
    '/:id',
    {
      config: write,
      schema: {
        tags,
        summary: 'Delete a dashboard folder',
        description:
          'A folder holding folders or dashboards answers 409 unless `recursive=true`, which deletes everything below it.',
        params: IdParams,
        querystring: Type.Object(
          { recursive: Type.Optional(Type.Boolean({ default: false })) },
          { additionalProperties: false },
        ),
        response: { 204: Type.Null() },
      },
    },
    async (request, reply) => {
      await folders.remove(
        org(request),
        request.params.id,
        request.query.recursive ?? false,
        actorOf(request),
      );
      return reply.code(204).send(null);
    },
  );
};
