import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { notFound } from '../../../platform/errors.js';
import type { Sandbox } from '../sandbox/sandbox.js';
import type { NodeServices } from './node-services.js';
import { NODE_TEST_TIMEOUT_SECONDS, runNodeTest, SANDBOX_TEST_LIMITS } from './node-test.js';
import { NODE_TYPES, nodeType, toNodeTypeView } from './node-types.js';

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
  expressionParameters: Type.Array(Type.String(), {
    description: 'Parameters holding a JSONata expression (the console edits them as code).',
  }),
  codeParameters: Type.Array(Type.String(), {
    description: 'Parameters holding a JavaScript function body (the console edits them as code).',
  }),
});

const TestBody = Type.Object(
  {
    node: Type.Object({
      type: Type.String(),
      parameters: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
      settings: Type.Optional(
        Type.Object({
          timeoutSeconds: Type.Optional(
            Type.Integer({
              minimum: 1,
              maximum: 600,
              description: `The node's time limit; a test runs it with at most ${NODE_TEST_TIMEOUT_SECONDS}.`,
            }),
          ),
        }),
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

export const TestResult = Type.Object({
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
  /** Data and integration nodes' services; a tested node's state lives in memory for the request only. */
  services?: NodeServices;
}> = async (app, deps) => {
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
          'needs `confirmWrites: true`. A failing node answers 200 with `error`; bad parameters answer 400 with `problems`. ' +
          SANDBOX_TEST_LIMITS,
        body: TestBody,
        response: { 200: TestResult },
      },
    },
    async (request) => {
      const { node, ...rest } = request.body;
      return {
        data: await runNodeTest(request.organization!.id, { id: 'test', name: 'Test', ...node }, rest, deps),
      };
    },
  );
};
