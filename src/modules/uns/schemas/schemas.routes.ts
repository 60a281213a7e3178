import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { formatRfc3339Micros } from '../rfc3339.js';
import type { TopicsService } from '../topics/topics.service.js';
import { CursorPagination, CursorQuery, decodeCursor, encodeCursor, NO_NUL } from '../topics/uns-cursor.js';
import type { SchemasService } from './schemas.service.js';

const tags = ['UNS schemas'];
const SCHEMA_NAME = '^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$';
const SchemaNameParams = Type.Object({ name: Type.String({ pattern: SCHEMA_NAME }) });
const acceptDefinition = () => () => true;

const SchemaBody = Type.Object(
  {
    name: Type.String({ description: '1 to 100 letters, digits, ".", "_", "-".' }),
    description: Type.Optional(Type.Union([Type.String({ maxLength: 1000, pattern: NO_NUL }), Type.Null()])),
    definition: Type.Object(
      {
        jsonSchema: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
        unit: Type.Optional(Type.String()),
        minimum: Type.Optional(Type.Number()),
        maximum: Type.Optional(Type.Number()),
        staleAfterMs: Type.Optional(Type.Integer({ minimum: 1 })),
      },
      { description: 'JSON Schema of the value, unit, inclusive bounds, stale-after threshold.' },
    ),
  },
  { additionalProperties: false },
);

/** Schema registry, bindings and violations, under `/api/v1/uns/topics`. */
export const schemasRoutes: FastifyPluginAsyncTypebox<{
  schemas: SchemasService;
  topics: TopicsService;
}> = async (app, { schemas, topics }) => {
  const read = { access: { scope: 'uns:read' } };
  const write = { access: { scope: 'uns:write' } };
  const userOf = (request: { principal: { userId: string } | null }) => request.principal?.userId ?? null;

  app.get(
    '/schemas',
    { config: read, schema: { tags, summary: 'List schemas (newest versions)' } },
    async (request) => ({
      data: await schemas.list(request.organization!.id),
    }),
  );

  app.post(
    '/schemas',
    {
      config: write,
      validatorCompiler: acceptDefinition,
      schema: { tags, summary: 'Register a schema (version 1)', body: SchemaBody },
    },
    async (request, reply) => {
      const body = (request.body ?? {}) as {
        name?: unknown;
        definition?: unknown;
        description?: string | null;
      };
      const created = await schemas.addVersion(
        request.organization!.id,
        body.name,
        body,
        userOf(request),
        true,
      );
      return reply.code(201).send({ data: created });
    },
  );

  app.get(
    '/schemas/:name',
    {
      config: read,
      schema: {
        tags,
        summary: 'Versions of a schema, newest first',
        params: SchemaNameParams,
      },
    },
    async (request) => ({ data: await schemas.versions(request.organization!.id, request.params.name) }),
  );

  app.post(
    '/schemas/:name/versions',
    {
      config: write,
      validatorCompiler: acceptDefinition,
      schema: {
        tags,
        summary: 'Add a version to a schema',
        params: SchemaNameParams,
        body: Type.Omit(SchemaBody, ['name']),
      },
    },
    async (request, reply) => {
      const body = (request.body ?? {}) as { definition?: unknown; description?: string | null };
      const params = request.params as { name: string };
      const created = await schemas.addVersion(
        request.organization!.id,
        params.name,
        body,
        userOf(request),
        false,
      );
      return reply.code(201).send({ data: created });
    },
  );

  app.get(
    '/schema-bindings',
    { config: read, schema: { tags, summary: 'List schema bindings' } },
    async (request) => ({
      data: await schemas.listBindings(request.organization!.id),
    }),
  );

  app.post(
    '/schema-bindings',
    {
      config: write,
      schema: {
        tags,
        summary: 'Bind a schema to a topic or topic filter',
        description:
          'The most specific matching filter governs a topic. normal: violations lower quality to at least 1 and are recorded; strict: any violation refuses the publish. A wrong value type is refused in both.',
        body: Type.Object(
          {
            filter: Type.String({ maxLength: 1024 }),
            schema: Type.String({ pattern: SCHEMA_NAME }),
            version: Type.Optional(Type.Integer({ minimum: 1 })),
            mode: Type.Optional(Type.Union([Type.Literal('normal'), Type.Literal('strict')])),
          },
          { additionalProperties: false },
        ),
      },
    },
    async (request, reply) =>
      reply
        .code(201)
        .send({ data: await schemas.bind(request.organization!.id, request.body, userOf(request)) }),
  );

  app.delete(
    '/schema-bindings/:id',
    {
      config: write,
      schema: {
        tags,
        summary: 'Remove a schema binding',
        params: Type.Object({ id: Type.String({ format: 'uuid' }) }),
      },
    },
    async (request, reply) => {
      await schemas.unbind(request.organization!.id, request.params.id);
      return reply.code(204).send();
    },
  );

  app.get(
    '/violations',
    {
      config: read,
      schema: {
        tags,
        summary: 'Schema violations of a topic, newest first',
        querystring: Type.Object(
          { topic: Type.String({ maxLength: 1024 }), ...CursorQuery },
          { additionalProperties: false },
        ),
        response: {
          200: Type.Object({
            data: Type.Array(
              Type.Object({
                id: Type.String(),
                timestamp: Type.String(),
                kind: Type.String(),
                message: Type.String(),
                receivedAt: Type.String(),
              }),
            ),
            pagination: CursorPagination,
          }),
        },
      },
    },
    async (request) => {
      const organizationId = request.organization!.id;
      const path = topics.parseNodePath(request.query.topic);
      const topicId = await topics.resolve(organizationId, path);
      const limit = request.query.limit ?? 100;
      const cursor = decodeCursor<string>(request.query.cursor, 'string');
      const [receivedUs, id] = cursor ? cursor.split(' ') : [];
      const after = receivedUs && id ? { receivedUs: Number(receivedUs), id } : null;
      const rows = await topics.violations(topicId, after, limit);
      const page = rows.slice(0, limit);
      const last = page[page.length - 1];
      return {
        data: page.map((r) => ({
          id: r.id,
          timestamp: formatRfc3339Micros(Number(r.ts_us)),
          kind: r.kind,
          message: r.message,
          receivedAt: formatRfc3339Micros(Number(r.received_us)),
        })),
        pagination: {
          limit,
          nextCursor: rows.length > limit && last ? encodeCursor(`${last.received_us} ${last.id}`) : null,
        },
      };
    },
  );
};
