import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { notFound } from '../../../platform/errors.js';
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
  sideEffect: Type.Union([
    Type.Literal('none'),
    Type.Literal('reads-device'),
    Type.Literal('writes-device'),
    Type.Literal('external'),
  ]),
  testable: Type.Boolean(),
});

/** `/api/v1/engine/nodes`: the node type catalogue. */
export const nodesRoutes: FastifyPluginAsyncTypebox = async (app) => {
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
};
