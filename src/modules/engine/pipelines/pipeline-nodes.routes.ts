import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { type Static, Type } from 'typebox';
import { actorOf } from '../../../platform/actor.js';
import { badRequest, notFound, withDetails } from '../../../platform/errors.js';
import { dataEnvelope } from '../../../platform/schemas.js';
import { bodyObject, domainBody } from '../../../platform/validation.js';
import { type NodeTestDeps, runNodeTest, SANDBOX_TEST_LIMITS } from '../nodes/node-test.js';
import { TestResult } from '../nodes/nodes.routes.js';
import type { PipelineNodesService } from './pipeline-nodes.service.js';
import type { PipelineRow } from './pipelines.repository.js';
import { Pipeline, PipelineEdgeSchema, PipelineErrorBody, PipelineNodeSchema } from './pipelines.schemas.js';

const tags = ['Nodes'];
const write = { access: { scope: 'pipelines:write' } };

const Version = Type.Integer({
  description: 'The pipeline version this change is based on; another one answers 409.',
});
const Params = Type.Object({ id: Type.String({ format: 'uuid' }) });
const NodeParams = Type.Object({
  id: Type.String({ format: 'uuid' }),
  nodeId: Type.String({ maxLength: 64 }),
});

const errors = {
  400: {
    description: 'Invalid input (`path` names the member), or an enabled pipeline left invalid (`problems`).',
    ...PipelineErrorBody,
  },
  404: { description: 'No such pipeline or node.', ...PipelineErrorBody },
  409: {
    description: 'A stale version (`currentVersion`), or a node id or name in use.',
    ...PipelineErrorBody,
  },
};

const Rewrite = Type.Object({ nodeId: Type.String(), path: Type.String({ description: 'Below the node.' }) });

/**
 * `/api/v1/engine/pipelines/{id}/nodes`: add, update, remove and rename one node (each a new pipeline
 * version, with optimistic concurrency), and test a stored node with supplied input (nothing stored).
 */
export const pipelineNodesRoutes: FastifyPluginAsyncTypebox<
  NodeTestDeps & {
    nodes: PipelineNodesService;
    getPipeline: (organizationId: string, id: string) => Promise<PipelineRow>;
    toPipeline: (p: PipelineRow) => Static<typeof Pipeline>;
  }
> = async (app, deps) => {
  const { nodes, toPipeline } = deps;
  const org = (request: { organization?: { id: string } | null }) => request.organization!.id;

  app.post(
    '/:id/nodes',
    {
      config: write,
      validatorCompiler: domainBody,
      schema: {
        tags,
        summary: 'Add a node (a new pipeline version)',
        description:
          'Without `id` one is generated; without `name` the type title is used ("Set fields 2" when taken). ' +
          '`edges` may connect the new node to existing ones.',
        params: Params,
        body: Type.Object({
          version: Version,
          node: Type.Object({
            ...PipelineNodeSchema.properties,
            id: Type.Optional(PipelineNodeSchema.properties.id),
            name: Type.Optional(PipelineNodeSchema.properties.name),
          }),
          edges: Type.Optional(Type.Array(PipelineEdgeSchema)),
        }),
        response: { 201: dataEnvelope(Pipeline), ...errors },
      },
    },
    async (request, reply) => {
      const body = bodyObject(request.body);
      const extra = Object.keys(body).find((k) => !['version', 'node', 'edges'].includes(k));
      if (extra !== undefined)
        throw withDetails(
          badRequest(`/${extra.slice(0, 60)}: is not a known member; allowed: version, node, edges`),
          {
            path: `/${extra.slice(0, 60)}`,
          },
        );
      const saved = await nodes.add(org(request), request.params.id, body, actorOf(request));
      return reply.code(201).send({ data: toPipeline(saved) });
    },
  );

  app.patch(
    '/:id/nodes/:nodeId',
    {
      config: write,
      validatorCompiler: domainBody,
      schema: {
        tags,
        summary: 'Update a node (a new pipeline version)',
        description:
          'Replaces the members given (`parameters` as a whole); `null` removes an optional member. ' +
          'The name changes through `…/rename`, which rewrites references.',
        params: NodeParams,
        body: Type.Object({
          version: Version,
          type: Type.Optional(Type.String()),
          parameters: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
          settings: Type.Optional(Type.Union([PipelineNodeSchema.properties.settings, Type.Null()])),
          position: Type.Optional(Type.Union([PipelineNodeSchema.properties.position, Type.Null()])),
          notes: Type.Optional(Type.Union([Type.String({ maxLength: 2000 }), Type.Null()])),
          disabled: Type.Optional(Type.Union([Type.Boolean(), Type.Null()])),
        }),
        response: { 200: dataEnvelope(Pipeline), ...errors },
      },
    },
    async (request) => {
      const { id, nodeId } = request.params;
      const saved = await nodes.update(org(request), id, nodeId, bodyObject(request.body), actorOf(request));
      return { data: toPipeline(saved) };
    },
  );

  app.delete(
    '/:id/nodes/:nodeId',
    {
      config: write,
      schema: {
        tags,
        summary: 'Remove a node with its edges (a new pipeline version)',
        params: NodeParams,
        querystring: Type.Object({ version: Version }),
        response: { 200: dataEnvelope(Pipeline), ...errors },
      },
    },
    async (request) => {
      const { id, nodeId } = request.params;
      const saved = await nodes.remove(org(request), id, nodeId, request.query.version, actorOf(request));
      return { data: toPipeline(saved) };
    },
  );

  app.post(
    '/:id/nodes/:nodeId/rename',
    {
      config: write,
      validatorCompiler: domainBody,
      schema: {
        tags,
        summary: 'Rename a node and rewrite references to it (one new pipeline version)',
        description:
          'References to the old name in other nodes are rewritten: `$node.Old`, `` $node.`Old` ``, `$node["Old"]`, ' +
          '`$lookup($node, "Old")` in JSONata parameters and `{{ expr }}` strings, and `$node.Old`, `$node["Old"]` ' +
          'and `const { Old } = $node` in JavaScript (parsed; string literals and comments are left alone). ' +
          '`rewritten` lists each changed parameter; `skipped` lists code that does not parse (left as it was).',
        params: NodeParams,
        body: Type.Object({ version: Version, name: Type.String({ minLength: 1, maxLength: 100 }) }),
        response: {
          200: Type.Object({
            data: Pipeline,
            rewritten: Type.Array(Rewrite),
            skipped: Type.Array(Rewrite),
          }),
          ...errors,
        },
      },
    },
    async (request) => {
      const body = bodyObject(request.body);
      const extra = Object.keys(body).find((k) => !['version', 'name'].includes(k));
      if (extra !== undefined)
        throw withDetails(
          badRequest(`/${extra.slice(0, 60)}: is not a known member; allowed: version, name`),
          {
            path: `/${extra.slice(0, 60)}`,
          },
        );
      const { id, nodeId } = request.params;
      const result = await nodes.rename(org(request), id, nodeId, body, actorOf(request));
      return { data: toPipeline(result.pipeline), rewritten: result.rewritten, skipped: result.skipped };
    },
  );

  app.post(
    '/:id/nodes/:nodeId/test',
    {
      config: write,
      schema: {
        tags,
        summary: 'Test a stored node with supplied input (nothing is stored)',
        description:
          'Runs the node of the current version as the engine would, with `input` (`$input`), `trigger` and `nodes` ' +
          '(`$node`, outputs by name). A node whose side effect is not `none` needs `confirmWrites: true`. ' +
          'A failing node answers 200 with `error`; bad parameters answer 400 with `problems`. ' +
          SANDBOX_TEST_LIMITS,
        params: NodeParams,
        body: Type.Optional(
          Type.Object(
            {
              input: Type.Optional(Type.Unknown()),
              trigger: Type.Optional(Type.Unknown()),
              nodes: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
              confirmWrites: Type.Optional(Type.Boolean()),
            },
            { additionalProperties: false },
          ),
        ),
        response: { 200: TestResult, 400: errors[400], 404: errors[404] },
      },
    },
    async (request) => {
      const pipeline = await deps.getPipeline(org(request), request.params.id);
      const node = pipeline.nodes.find((n) => n.id === request.params.nodeId);
      if (!node) throw notFound('node');
      const { id, name, type, parameters, settings } = node;
      const candidate =
        settings === undefined ? { id, name, type, parameters } : { id, name, type, parameters, settings };
      return {
        data: await runNodeTest(org(request), candidate, request.body ?? {}, deps, '/nodes/' + node.id),
      };
    },
  );
};
