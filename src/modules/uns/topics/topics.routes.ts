import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { TopicsService } from './topics.service.js';
import { CursorPagination, CursorQuery, NO_NUL } from './uns-cursor.js';

const tags = ['UNS topics'];

const TopicItem = Type.Object({
  path: Type.String(),
  name: Type.String(),
  parentPath: Type.Union([Type.String(), Type.Null()]),
  depth: Type.Integer({ description: 'Segments below the version prefix.' }),
  description: Type.Union([Type.String(), Type.Null()]),
  hasChildren: Type.Boolean(),
  hasValue: Type.Boolean(),
  createdAt: Type.String({ format: 'date-time' }),
});

const LatestValue = Type.Object({
  topic: Type.String(),
  value: Type.Unknown(),
  timestamp: Type.String({ description: 'Declared timestamp, RFC 3339 with microseconds.' }),
  quality: Type.Integer(),
  source: Type.Union([Type.String(), Type.Null()]),
  receivedAt: Type.String(),
});

const TopicView = Type.Object({
  path: Type.String(),
  name: Type.String(),
  parentPath: Type.Union([Type.String(), Type.Null()]),
  depth: Type.Integer(),
  description: Type.Union([Type.String(), Type.Null()]),
  hasChildren: Type.Boolean(),
  createdAt: Type.String(),
  schemaBinding: Type.Union([Type.Unknown(), Type.Null()], {
    description: 'The binding that governs the topic (most specific filter), with its schema.',
  }),
  latest: Type.Union([LatestValue, Type.Null()]),
  stale: Type.Union([Type.Boolean(), Type.Null()], {
    description:
      "Whether the latest value is older than the schema's stale-after threshold; null without one.",
  }),
});

const PathParams = Type.Object({ '*': Type.String({ description: 'Topic path, e.g. v1/plant/line/temp.' }) });

/** `/api/v1/uns/topics`: the topic tree. Topics are addressed by their path after the base path. */
export const topicsRoutes: FastifyPluginAsyncTypebox<{ topics: TopicsService }> = async (app, { topics }) => {
  app.get(
    '/',
    {
      config: { access: { scope: 'uns:read' } },
      schema: {
        tags,
        summary: 'Browse, search or filter topics',
        description:
          'Without search or filter: the children of `parent` (top-level nodes when absent). `search`: paths containing the text. `filter`: MQTT-style filter with + and #. Keyset paging.',
        querystring: Type.Object(
          {
            parent: Type.Optional(Type.String({ maxLength: 1024 })),
            search: Type.Optional(Type.String({ maxLength: 1024, pattern: NO_NUL })),
            filter: Type.Optional(Type.String({ maxLength: 1024 })),
            ...CursorQuery,
          },
          { additionalProperties: false },
        ),
        response: { 200: Type.Object({ data: Type.Array(TopicItem), pagination: CursorPagination }) },
      },
    },
    async (request) => {
      const page = await topics.list(request.organization!.id, request.query);
      return {
        data: page.items,
        pagination: { limit: request.query.limit ?? 100, nextCursor: page.nextCursor },
      };
    },
  );

  app.post(
    '/',
    {
      config: { access: { scope: 'uns:write' } },
      schema: {
        tags,
        summary: 'Create a topic',
        description: 'Creates the topic and any missing parent nodes, without a value. 409 when it exists.',
        body: Type.Object(
          {
            path: Type.String({ maxLength: 2048 }),
            description: Type.Optional(
              Type.Union([Type.String({ maxLength: 1000, pattern: NO_NUL }), Type.Null()]),
            ),
          },
          { additionalProperties: false },
        ),
        response: { 201: Type.Object({ data: TopicView }) },
      },
    },
    async (request, reply) => {
      const organizationId = request.organization!.id;
      await topics.create(organizationId, request.body.path, request.body.description ?? null);
      return reply.code(201).send({ data: await topics.view(organizationId, request.body.path) });
    },
  );

  app.get(
    '/*',
    {
      config: { access: { scope: 'uns:read' } },
      schema: {
        tags,
        summary: 'View a topic',
        description: 'Configuration, schema binding, latest value and staleness.',
        params: PathParams,
        response: { 200: Type.Object({ data: TopicView }) },
      },
    },
    async (request) => ({ data: await topics.view(request.organization!.id, request.params['*']) }),
  );

  app.patch(
    '/*',
    {
      config: { access: { scope: 'uns:write' } },
      schema: {
        tags,
        summary: 'Configure a topic',
        params: PathParams,
        body: Type.Object(
          { description: Type.Union([Type.String({ maxLength: 1000, pattern: NO_NUL }), Type.Null()]) },
          { additionalProperties: false },
        ),
        response: { 200: Type.Object({ data: TopicView }) },
      },
    },
    async (request) => {
      const organizationId = request.organization!.id;
      await topics.update(organizationId, request.params['*'], request.body.description);
      return { data: await topics.view(organizationId, request.params['*']) };
    },
  );

  app.delete(
    '/*',
    {
      config: { access: { scope: 'uns:write' } },
      schema: {
        tags,
        summary: 'Delete a topic with its history',
        description: 'With recursive=true the whole subtree; otherwise 409 when the node has children.',
        params: PathParams,
        querystring: Type.Object(
          { recursive: Type.Optional(Type.Boolean({ default: false })) },
          { additionalProperties: false },
        ),
        response: { 200: Type.Object({ data: Type.Object({ deleted: Type.Integer() }) }) },
      },
    },
    async (request) => ({
      data: {
        deleted: await topics.remove(
          request.organization!.id,
          request.params['*'],
          request.query.recursive ?? false,
        ),
      },
    }),
  );
};
