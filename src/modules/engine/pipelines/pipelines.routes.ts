import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { actorOf } from '../../../platform/actor.js';
import { badRequest, insufficientScope, withDetails } from '../../../platform/errors.js';
import { dataEnvelope, errorResponse, IdParams, isoTime } from '../../../platform/schemas.js';
import { bodyObject, domainBody } from '../../../platform/validation.js';
import { ForceQuery, ImpactConflictBody } from '../../graph/graph.schemas.js';
import { impactCheck } from '../../graph/impact/guard-impact.js';
import type { EntityVersionsRepository } from '../../versions/entity-versions.repository.js';
import { versionRoutes } from '../../versions/versions.routes.js';
import { Execution, toExecution } from '../executions/executions.schemas.js';
import type { NodeTestDeps } from '../nodes/node-test.js';
import { snapshotOf } from './pipeline-content.js';
import { pipelineNodesRoutes } from './pipeline-nodes.routes.js';
import type { PipelineNodesService } from './pipeline-nodes.service.js';
import type { PipelineRow } from './pipelines.repository.js';
import {
  ClonePipelineBody,
  CreatePipelineBody,
  ExecuteBody,
  ListPipelinesQuery,
  Pipeline,
  PipelineErrorBody,
  PipelineList,
  UpdatePipelineBody,
} from './pipelines.schemas.js';
import { ENTITY_TYPE, type PipelineInput, type PipelinesService } from './pipelines.service.js';

const tags = ['Pipelines'];
const read = { access: { scope: 'pipelines:read' } };
const write = { access: { scope: 'pipelines:write' } };

const MEMBERS = ['name', 'description', 'labels', 'enabled', 'settings', 'nodes', 'edges'];

const errors = {
  400: {
    description:
      'Invalid input (`path` names the member), or a graph that cannot be enabled (`problems` lists all).',
    ...PipelineErrorBody,
  },
  409: { description: 'A name clash or a stale version (`currentVersion`).', ...PipelineErrorBody },
};

/** `/api/v1/engine/pipelines`: pipelines with their graph, settings, versions and manual runs. */
export const pipelinesRoutes: FastifyPluginAsyncTypebox<{
  pipelines: PipelinesService;
  versions: EntityVersionsRepository;
  /** Node operations under `/{id}/nodes` (pipeline-nodes.routes.ts). */
  nodeOps?: NodeTestDeps & { nodes: PipelineNodesService };
}> = async (app, { pipelines, versions, nodeOps }) => {
  const org = (request: { organization?: { id: string } | null }) => request.organization!.id;
  const toPipeline = (p: PipelineRow) => ({
    id: p.id,
    ...snapshotOf(p),
    problems: pipelines.problems(p),
    version: p.version,
    createdAt: isoTime(p.createdAt),
    createdBy: p.createdBy,
    updatedAt: isoTime(p.updatedAt),
    updatedBy: p.updatedBy,
  });

  app.get(
    '/',
    {
      config: read,
      schema: {
        tags,
        summary: 'List pipelines',
        description: 'Search name and description; filter by `enabled` and `label` (`key` or `key=value`).',
        querystring: ListPipelinesQuery,
        response: { 200: PipelineList },
      },
    },
    async (request) => {
      const { rows, pagination } = await pipelines.list(org(request), request.query);
      return { data: rows.map((p) => ({ ...toPipeline(p), nodeCount: p.nodes.length })), pagination };
    },
  );

  app.post(
    '/',
    {
      config: write,
      validatorCompiler: domainBody,
      schema: {
        tags,
        summary: 'Create a pipeline (version 1)',
        description: 'An invalid graph can be saved (see `problems`), but not enabled.',
        body: CreatePipelineBody,
        response: { 201: dataEnvelope(Pipeline), ...errors },
      },
    },
    async (request, reply) => {
      const body = bodyObject(request.body, MEMBERS);
      const created = await pipelines.create(org(request), body as PipelineInput, actorOf(request));
      return reply.code(201).send({ data: toPipeline(created) });
    },
  );

  app.get(
    '/:id',
    {
      config: read,
      schema: {
        tags,
        summary: 'View a pipeline',
        params: IdParams,
        response: { 200: dataEnvelope(Pipeline) },
      },
    },
    async (request) => ({ data: toPipeline(await pipelines.get(org(request), request.params.id)) }),
  );

  app.put(
    '/:id',
    {
      config: write,
      validatorCompiler: domainBody,
      schema: {
        tags,
        summary: 'Replace a pipeline (a new version)',
        description:
          'The whole pipeline with the `version` it was based on; a stale version answers 409 and changes nothing. ' +
          'An enabled pipeline keeps a valid graph: otherwise 400 listing every problem. ' +
          'A body equal to what is stored writes nothing: 200 with the pipeline as it is (same version).',
        params: IdParams,
        body: UpdatePipelineBody,
        response: { 200: dataEnvelope(Pipeline), ...errors },
      },
    },
    async (request) => {
      const body = bodyObject(request.body, [...MEMBERS, 'version']);
      if (typeof body.version !== 'number' || !Number.isInteger(body.version))
        throw withDetails(badRequest('/version: is required: the version this change is based on'), {
          path: '/version',
        });
      const saved = await pipelines.update(
        org(request),
        request.params.id,
        body as PipelineInput,
        actorOf(request),
      );
      return { data: toPipeline(saved) };
    },
  );

  app.delete(
    '/:id',
    {
      config: write,
      schema: {
        tags,
        summary: 'Delete a pipeline with its history',
        description:
          'Its queued executions are cancelled; its executions stay listed. 409 with the `impact` while active pipelines depend on it (run it, wait for it), unless `force=true`.',
        params: IdParams,
        querystring: ForceQuery,
        response: { 204: Type.Null(), 409: { description: 'Others depend on it.', ...ImpactConflictBody } },
      },
    },
    async (request, reply) => {
      await pipelines.delete(
        org(request),
        request.params.id,
        actorOf(request),
        impactCheck(request, { type: 'pipeline', id: request.params.id }, 'delete', request.query.force),
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
        summary: 'Clone a pipeline (disabled, version 1, node ids kept)',
        description: 'Default name "X (copy)", then "X (copy 2)"...',
        params: IdParams,
        body: Type.Optional(ClonePipelineBody),
        response: { 201: dataEnvelope(Pipeline), ...errors },
      },
    },
    async (request, reply) => {
      const body =
        request.body === undefined || request.body === null ? {} : bodyObject(request.body, ['name']);
      const created = await pipelines.clone(org(request), request.params.id, body, actorOf(request));
      return reply.code(201).send({ data: toPipeline(created) });
    },
  );

  for (const [action, enabled] of [
    ['enable', true],
    ['disable', false],
  ] as const)
    app.post(
      `/:id/${action}`,
      {
        config: write,
        schema: {
          tags,
          summary: enabled ? 'Enable a pipeline' : 'Disable a pipeline',
          description: enabled
            ? 'Needs a valid graph: otherwise 400 with `problems`, every problem with its node. A new version.'
            : 'Its triggers stop and its queued executions are cancelled. A new version.',
          params: IdParams,
          response: { 200: dataEnvelope(Pipeline), 400: errors[400] },
        },
      },
      async (request) => ({
        data: toPipeline(
          await pipelines.setEnabled(org(request), request.params.id, enabled, actorOf(request)),
        ),
      }),
    );

  app.post(
    '/:id/execute',
    {
      config: write,
      schema: {
        tags,
        summary: 'Run a pipeline from its manual trigger',
        description:
          'Queues an execution of the current version (202); the engine runs it. `GET /api/v1/engine/executions/{id}` follows it. While the organization is in maintenance the run is recorded as `skipped` with the reason `maintenance` (202 with that execution) unless the body says `"force": true`, which Owners and Admins may.',
        params: IdParams,
        body: Type.Optional(ExecuteBody),
        response: {
          202: dataEnvelope(Execution),
          400: errors[400],
          403: errorResponse('`force` from a role below Admin (`insufficient_scope`).'),
        },
      },
    },
    async (request, reply) => {
      const body = request.body ?? {};
      const force = body.force === true;
      if (force && !request.isSystemAdmin && !['Owner', 'Admin'].includes(request.organization?.role ?? ''))
        throw insufficientScope('the Owner or Admin role to run during maintenance (force)');
      const execution = await pipelines.execute(
        org(request),
        request.params.id,
        body.input,
        body.nodeId,
        actorOf(request),
        force,
        body.debug === true,
      );
      return reply.code(202).send({ data: toExecution(execution) });
    },
  );

  await app.register(versionRoutes, {
    entityType: ENTITY_TYPE,
    noun: 'pipeline',
    tags,
    readScope: 'pipelines:read',
    writeScope: 'pipelines:write',
    versions,
    exists: (organizationId, id) => pipelines.exists(organizationId, id),
    revert: async (organizationId, id, version, actor) =>
      toPipeline(await pipelines.revert(organizationId, id, version, actor)),
    revertResponse: dataEnvelope(Pipeline),
  });

  if (nodeOps)
    await app.register(pipelineNodesRoutes, {
      ...nodeOps,
      getPipeline: (organizationId, id) => pipelines.get(organizationId, id),
      toPipeline,
    });
};
