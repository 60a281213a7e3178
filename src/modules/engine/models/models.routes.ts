import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { actorOf } from '../../../platform/actor.js';
import { badRequest, withDetails } from '../../../platform/errors.js';
import { dataEnvelope, IdParams } from '../../../platform/schemas.js';
import { bodyObject, domainBody } from '../../../platform/validation.js';
import { ForceQuery, ImpactConflictBody } from '../../graph/graph.schemas.js';
import { impactCheck } from '../../graph/impact/guard-impact.js';
import type { EntityVersionsRepository } from '../../versions/entity-versions.repository.js';
import { versionRoutes } from '../../versions/versions.routes.js';
import { toBinding, toModel } from './model-views.js';
import {
  AcknowledgeQuery,
  BadRequestBody,
  BindBody,
  BindResult,
  CloneModelBody,
  ConflictBody,
  CreateModelBody,
  ListModelsQuery,
  Model,
  ModelBinding,
  ModelList,
  UpdateModelBody,
  ValidateBody,
  ValidateResult,
  VersionQuery,
} from './models.schemas.js';
import { ENTITY_TYPE, type ModelInput, type ModelsService } from './models.service.js';

const tags = ['Models'];
const read = { access: { scope: 'models:read' } };
const write = { access: { scope: 'models:write' } };

export { toModel };

const errors = {
  400: { description: 'Invalid input; the message and `path` name the member at fault.', ...BadRequestBody },
  409: {
    description:
      'A name clash, a stale version, or a breaking change to a bound model without acknowledgement.',
    ...ConflictBody,
  },
};

/** `/api/v1/engine/models`: data models with typed fields, versions, JSON Schema, validation, UNS bindings. */
export const modelsRoutes: FastifyPluginAsyncTypebox<{
  models: ModelsService;
  versions: EntityVersionsRepository;
}> = async (app, { models, versions }) => {
  const org = (request: { organization?: { id: string } | null }) => request.organization!.id;

  app.get(
    '/',
    {
      config: read,
      schema: {
        tags,
        summary: 'List models',
        description:
          'Search name and description, filter by label, sort by name, createdAt, updatedAt or version.',
        querystring: ListModelsQuery,
        response: { 200: ModelList },
      },
    },
    async (request) => {
      const { rows, pagination } = await models.list(org(request), request.query);
      return {
        data: rows.map((m) => {
          const { fields, ...rest } = toModel(m);
          return { ...rest, fieldCount: fields.length };
        }),
        pagination,
      };
    },
  );

  app.post(
    '/',
    {
      config: write,
      validatorCompiler: domainBody,
      schema: {
        tags,
        summary: 'Create a model (version 1)',
        body: CreateModelBody,
        response: { 201: dataEnvelope(Model), ...errors },
      },
    },
    async (request, reply) => {
      const body = bodyObject(request.body, ['name', 'description', 'labels', 'fields']);
      const created = await models.create(org(request), body as ModelInput, actorOf(request));
      return reply.code(201).send({ data: toModel(created) });
    },
  );

  app.get(
    '/:id',
    {
      config: read,
      schema: { tags, summary: 'View a model', params: IdParams, response: { 200: dataEnvelope(Model) } },
    },
    async (request) => ({ data: toModel(await models.get(org(request), request.params.id)) }),
  );

  app.put(
    '/:id',
    {
      config: write,
      validatorCompiler: domainBody,
      schema: {
        tags,
        summary: 'Replace a model (a new version)',
        description:
          'The whole model with the `version` it was based on; a stale version answers 409 and changes nothing. ' +
          'A breaking change (field removed, type changed, constraint tightened) to a bound model needs ' +
          '`acknowledgeBreaking=true`, else 409 listing the changes and the dependents. Bindings follow the new version. ' +
          'A body equal to what is stored writes nothing: 200 with the model as it is (same version).',
        params: IdParams,
        querystring: AcknowledgeQuery,
        body: UpdateModelBody,
        response: { 200: dataEnvelope(Model), ...errors },
      },
    },
    async (request) => {
      const body = bodyObject(request.body, ['name', 'description', 'labels', 'fields', 'version']);
      if (typeof body.version !== 'number' || !Number.isInteger(body.version))
        throw withDetails(badRequest('/version: is required: the version this change is based on'), {
          path: '/version',
        });
      const saved = await models.update(org(request), request.params.id, body, actorOf(request), {
        acknowledgeBreaking: request.query.acknowledgeBreaking === true,
      });
      return { data: toModel(saved) };
    },
  );

  app.delete(
    '/:id',
    {
      config: write,
      schema: {
        tags,
        summary: 'Delete a model with its history',
        description:
          '409 while another model refers to it; a bound model needs `acknowledgeBreaking=true` and loses its UNS schema bindings; 409 with the `impact` while active pipelines use it, unless `force=true`.',
        params: IdParams,
        querystring: Type.Object(
          { ...AcknowledgeQuery.properties, ...ForceQuery.properties },
          { additionalProperties: false },
        ),
        response: {
          204: Type.Null(),
          409: {
            description: errors[409].description,
            ...Type.Object({ ...ConflictBody.properties, impact: ImpactConflictBody.properties.impact }),
          },
        },
      },
    },
    async (request, reply) => {
      await models.delete(
        org(request),
        request.params.id,
        request.query.acknowledgeBreaking === true,
        actorOf(request),
        impactCheck(request, { type: 'model', id: request.params.id }, 'delete', request.query.force, [
          'pipeline',
        ]),
      );
      return reply.code(204).send(null);
    },
  );

  app.post(
    '/:id/clone',
    {
      config: write,
      validatorCompiler: domainBody,
      schema: {
        tags,
        summary: 'Clone a model under a new name (its version 1)',
        params: IdParams,
        body: CloneModelBody,
        response: { 201: dataEnvelope(Model), ...errors },
      },
    },
    async (request, reply) => {
      const body = bodyObject(request.body, ['name']);
      const created = await models.clone(org(request), request.params.id, body, actorOf(request));
      return reply.code(201).send({ data: toModel(created) });
    },
  );

  app.get(
    '/:id/json-schema',
    {
      config: read,
      schema: {
        tags,
        summary: "A model's JSON Schema (draft 2020-12)",
        description:
          'Referenced models appear once under `$defs`; `version` picks any version (default: current).',
        params: IdParams,
        querystring: VersionQuery,
        response: { 200: Type.Object({ data: Type.Record(Type.String(), Type.Unknown()) }) },
      },
    },
    async (request) => ({
      data: await models.jsonSchema(org(request), request.params.id, request.query.version),
    }),
  );

  app.post(
    '/:id/validate',
    {
      config: read,
      schema: {
        tags,
        summary: 'Validate a value against a model',
        description: 'Every error with the JSON pointer of the member at fault. `version` default: current.',
        params: IdParams,
        body: ValidateBody,
        response: { 200: ValidateResult },
      },
    },
    async (request) => {
      const body = request.body as { value: unknown; version?: number };
      return { data: await models.validate(org(request), request.params.id, body.value, body.version) };
    },
  );

  app.get(
    '/:id/bindings',
    {
      config: read,
      schema: {
        tags,
        summary: "A model's bindings to UNS topic prefixes",
        params: IdParams,
        response: { 200: Type.Object({ data: Type.Array(ModelBinding) }) },
      },
    },
    async (request) => ({
      data: (await models.binding.list(org(request), request.params.id)).map(toBinding),
    }),
  );

  app.post(
    '/:id/bindings',
    {
      config: { access: { scope: 'models:write' } },
      schema: {
        tags,
        summary: 'Bind a model to a UNS topic prefix',
        description:
          'Each leaf field becomes a UNS schema binding of `<topicPrefix>/<field path>` with its type, unit, limits and ' +
          'staleness, so published values follow the quality contract. Binding the same prefix again remakes it (200).',
        params: IdParams,
        body: BindBody,
        response: { 200: BindResult, 201: BindResult, 409: errors[409] },
      },
    },
    async (request, reply) => {
      const made = await models.binding.bind(org(request), request.params.id, request.body, actorOf(request));
      return reply
        .code(made.created ? 201 : 200)
        .send({ data: { ...toBinding(made.binding), skipped: made.skipped } });
    },
  );

  app.delete(
    '/:id/bindings/:bindingId',
    {
      config: write,
      schema: {
        tags,
        summary: 'Unbind a model from a topic prefix (its UNS schema bindings go)',
        params: Type.Object({
          id: Type.String({ format: 'uuid' }),
          bindingId: Type.String({ format: 'uuid' }),
        }),
        response: { 204: Type.Null() },
      },
    },
    async (request, reply) => {
      await models.binding.unbind(
        org(request),
        request.params.id,
        request.params.bindingId,
        actorOf(request),
      );
      return reply.code(204).send(null);
    },
  );

  await app.register(versionRoutes, {
    entityType: ENTITY_TYPE,
    noun: 'model',
    tags,
    readScope: 'models:read',
    writeScope: 'models:write',
    versions,
    exists: (organizationId, id) => models.exists(organizationId, id),
    revert: async (organizationId, id, version, actor, request) => {
      const query = request.query as { acknowledgeBreaking?: string };
      const saved = await models.revert(
        organizationId,
        id,
        version,
        actor,
        query.acknowledgeBreaking === 'true',
      );
      return toModel(saved);
    },
    revertResponse: dataEnvelope(Model),
  });
};
