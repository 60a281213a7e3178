import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { badRequest, notFound, withDetails } from '../../../platform/errors.js';
import { checkNodes, graphProblems, PipelineInputError } from '../pipelines/pipeline-definition.js';
import type { Sandbox } from '../sandbox/sandbox.js';
import { SandboxError } from '../sandbox/sandbox.js';
import { NODE_TYPES, type NodeContext, NodeError, nodeType, toNodeTypeView } from './node-types.js';

const tags = ['Nodes'];
const read = { access: { scope: 'pipelines:read' } };

const NodeTypeSchema = Type.Object({
  type: Type.String(),
  typeVersion: Type.Integer(),
  category: Type.String(),
  title: Type.String(),
  description: Type.String(),
  parameters: Type.Record(Type.String(), Type.Unknown(), {
    description: 'JSON Schema (2020-12) of `parameters`.',
  }),
  inputs: Type.Array(Type.String()),
  outputs: Type.Array(Type.String(), {
    description: 'Output ports; every node also has `error` (on-error errorPort).',
  }),
  dynamicOutputs: Type.Optional(
    Type.Object(
      { parameter: Type.String(), port: Type.String() },
      {
        description:
          'More output ports made by the parameters: one `port` (`{index}` filled in) per item of `parameter`.',
      },
    ),
  ),
  sideEffect: Type.Union([
    Type.Literal('none'),
    Type.Literal('reads-device'),
    Type.Literal('writes-device'),
    Type.Literal('external'),
  ]),
  testable: Type.Boolean(),
});

const TestBody = Type.Object(
  {
    node: Type.Object({
      type: Type.String(),
      parameters: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
      settings: Type.Optional(
        Type.Object({ timeoutSeconds: Type.Optional(Type.Integer({ minimum: 1, maximum: 600 })) }),
      ),
    }),
    input: Type.Optional(Type.Unknown({ description: 'The node input (`$input`, `$` in JSONata).' })),
    trigger: Type.Optional(Type.Unknown({ description: '`$trigger`.' })),
    nodes: Type.Optional(
      Type.Record(Type.String(), Type.Unknown(), { description: '`$node`: outputs by node name.' }),
    ),
    confirmWrites: Type.Optional(
      Type.Boolean({
        description: 'Required to test a node whose side effect is not `none` (it really writes).',
      }),
    ),
  },
  { additionalProperties: false },
);

const TestResult = Type.Object({
  data: Type.Object({
    output: Type.Unknown(),
    port: Type.Union([Type.String(), Type.Null()]),
    durationMs: Type.Integer(),
    logs: Type.Array(Type.String()),
    error: Type.Union([Type.Object({ code: Type.String(), message: Type.String() }), Type.Null()]),
  }),
});

/** `/api/v1/engine/nodes`: the node type catalogue, and testing one node without storing anything. */
export const nodesRoutes: FastifyPluginAsyncTypebox<{
  sandbox: Sandbox;
  publish: (organizationId: string, topic: string, value: unknown, quality?: number) => Promise<void>;
}> = async (app, { sandbox, publish }) => {
  app.get(
    '/',
    {
      config: read,
      schema: {
        tags,
        summary: 'List node types',
        description: 'Each with the JSON Schema of its parameters, its ports and its side effect.',
        response: { 200: Type.Object({ data: Type.Array(NodeTypeSchema) }) },
      },
    },
    async () => ({ data: NODE_TYPES.map(toNodeTypeView) }),
  );

  app.get(
    '/:type',
    {
      config: read,
      schema: {
        tags,
        summary: 'View a node type',
        params: Type.Object({ type: Type.String({ maxLength: 100 }) }),
        response: { 200: Type.Object({ data: NodeTypeSchema }) },
      },
    },
    async (request) => {
      const found = nodeType(request.params.type);
      if (!found) throw notFound('node type');
      return { data: toNodeTypeView(found) };
    },
  );

  app.post(
    '/test',
    {
      config: { access: { scope: 'pipelines:write' } },
      schema: {
        tags,
        summary: 'Test one node with supplied input (nothing is stored)',
        description:
          'Runs the node as the engine would, in the sandbox. A node that reaches outside (side effect other than `none`) ' +
          'needs `confirmWrites: true`. A failing node answers 200 with `error`; bad parameters answer 400 with `problems`.',
        body: TestBody,
        response: { 200: TestResult },
      },
    },
    async (request) => {
      const body = request.body;
      let node: ReturnType<typeof checkNodes>[number];
      try {
        [node] = checkNodes([{ id: 'test', name: 'Test', ...body.node }]) as [
          ReturnType<typeof checkNodes>[number],
        ];
      } catch (error) {
        if (error instanceof PipelineInputError) {
          const path = error.path.replace(/^\/nodes\/0/, '/node');
          throw withDetails(badRequest(`${path}: ${error.message.slice(error.path.length + 2)}`), { path });
        }
        throw error;
      }
      const type = nodeType(node.type);
      if (!type)
        throw withDetails(badRequest(`/node/type: is not a known node type: ${JSON.stringify(node.type)}`), {
          path: '/node/type',
        });
      const problems = graphProblems([node], [])
        .filter((p) => p.path.startsWith('/nodes/0/'))
        .map((p) => ({ ...p, nodeId: null, path: p.path.replace(/^\/nodes\/0/, '/node') }));
      if (problems.length > 0)
        throw withDetails(badRequest(`${problems[0]!.path}: ${problems[0]!.message}`), {
          path: problems[0]!.path,
          problems,
        });
      if (type.sideEffect !== 'none' && body.confirmWrites !== true)
        throw withDetails(
          badRequest(
            `/confirmWrites: ${type.type} has side effect ${type.sideEffect}; send confirmWrites: true to really run it`,
          ),
          { path: '/confirmWrites' },
        );
      const organizationId = request.organization!.id;
      const context: NodeContext = {
        organizationId,
        parameters: node.parameters,
        input: body.input ?? null,
        trigger: body.trigger ?? null,
        nodes: Object.fromEntries(Object.entries(body.nodes ?? {}).map(([k, v]) => [k, { data: v }])),
        sandbox,
        timeoutMs: (node.settings?.timeoutSeconds ?? 10) * 1000,
        attempt: 1,
        publish: (topic, value, quality) => publish(organizationId, topic, value, quality),
      };
      const started = Date.now();
      try {
        const result = await type.run(context);
        return {
          data: {
            output: result.output ?? null,
            port: result.port,
            durationMs: Date.now() - started,
            logs: result.logs ?? [],
            error: null,
          },
        };
      } catch (error) {
        if (!(error instanceof SandboxError || error instanceof NodeError)) throw error;
        return {
          data: {
            output: null,
            port: null,
            durationMs: Date.now() - started,
            logs: [],
            error: { code: error.code, message: error.message },
          },
        };
      }
    },
  );
};
