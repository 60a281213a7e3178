import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { actorOf } from '../../../platform/actor.js';
import { PaginationSchema } from '../../../platform/list-query.js';
import { dataEnvelope, errorResponse, IdParams } from '../../../platform/schemas.js';
import { ConnectorFunction } from '../functions/functions.schemas.js';
import type { ConnectionBrowser } from './browse.service.js';

const tags = ['Connections'];
const NodeId = Type.String({
  minLength: 1,
  maxLength: 4096,
  description: 'e.g. ns=1;s=Plant1.Press4 or i=85.',
});

const BrowseQuery = Type.Object(
  {
    nodeId: Type.Optional({
      ...NodeId,
      description: 'The node whose children are listed; left out: the Objects folder (i=85).',
    }),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 200, default: 50, description: 'Page size.' })),
    offset: Type.Optional(
      Type.Integer({ minimum: 0, maximum: 10_000_000, default: 0, description: 'Children to skip.' }),
    ),
  },
  { additionalProperties: false },
);

const BrowsedNode = Type.Object({
  nodeId: Type.String(),
  browseName: Type.String({ description: 'The qualified name (`1:Press4`).' }),
  displayName: Type.String(),
  nodeClass: Type.String({ description: '`Object` or `Variable`.' }),
  dataType: Type.Union([Type.String(), Type.Null()], {
    description: "A variable's data type (`Double`); null otherwise.",
  }),
  hasChildren: Type.Boolean(),
});

const PickBody = Type.Object(
  {
    nodes: Type.Array(Type.Object({ nodeId: NodeId }, { additionalProperties: false }), {
      minItems: 1,
      maxItems: 500,
      description: 'The nodes picked in the browse.',
    }),
    mode: Type.Union([Type.Literal('read'), Type.Literal('subscribe')], {
      description:
        'read: one opcua.read function a node, polled every intervalMs; subscribe: one opcua.subscribe function monitoring them all.',
    }),
    topic: Type.String({
      minLength: 1,
      maxLength: 900,
      description:
        "The UNS topic each node's browse path is appended to: `v1/acme` and Plant1/Press4/Temperature make `v1/acme/Plant1/Press4/Temperature`.",
    }),
    intervalMs: Type.Optional(
      Type.Integer({
        minimum: 100,
        maximum: 86_400_000,
        description: 'read: the polling interval (required).',
      }),
    ),
    samplingIntervalMs: Type.Optional(Type.Integer({ minimum: 0, maximum: 3_600_000 })),
    publishingIntervalMs: Type.Optional(Type.Integer({ minimum: 10, maximum: 3_600_000 })),
    name: Type.Optional(
      Type.String({ minLength: 1, maxLength: 100, description: "subscribe: the function's name." }),
    ),
  },
  { additionalProperties: false },
);

/** `/api/v1/connections/{id}/browse`: an OPC UA server's address space, and functions for what was picked. */
export const browseRoutes: FastifyPluginAsyncTypebox<{ browser: ConnectionBrowser }> = async (
  app,
  { browser },
) => {
  app.get(
    '/:id/browse',
    {
      config: { access: { scope: 'connectors:read' } },
      schema: {
        tags,
        summary: 'Browse an OPC UA connection',
        description:
          "The children of `nodeId` (left out: the Objects folder): its hierarchical references to objects and variables, in the server's order, paged with limit and offset as every list. A read-only session of its own is opened with the saved settings (through the egress policy) and closed. 400 for a connection that is not OPC UA or a node the server does not know; 503 when the server cannot be reached (the message says why: host not found, connection refused, timed out, security rejected, authentication failed).",
        params: IdParams,
        querystring: BrowseQuery,
        response: {
          200: Type.Object({ data: Type.Array(BrowsedNode), pagination: PaginationSchema }),
          503: errorResponse('The OPC UA server cannot be reached.'),
        },
      },
    },
    async (request) => {
      const limit = request.query.limit ?? 50;
      const offset = request.query.offset ?? 0;
      const { children, total } = await browser.browse(
        request.organization!.id,
        request.params.id,
        request.query.nodeId,
        {
          offset,
          limit,
        },
      );
      return { data: children, pagination: { total, limit, offset } };
    },
  );

  app.post(
    '/:id/browse/functions',
    {
      config: { access: { scope: 'connectors:write' } },
      schema: {
        tags,
        summary: 'Create functions for the nodes picked in a browse',
        description:
          'One call for the nodes picked: mode read makes one opcua.read function a node, named after its browse path and polled every intervalMs into `<topic>/<browse path>`; mode subscribe makes one opcua.subscribe function whose items publish to the same topics (`uns.items`). Browse paths are walked up to the Objects folder on the server; a node id is never a topic segment (`/`, `+`, `#` in a browse name become `_`). All or nothing: 400 naming the field, 409 when a name is taken in the connection (ignoring case).',
        params: IdParams,
        body: PickBody,
        response: {
          201: dataEnvelope(Type.Array(ConnectorFunction)),
          409: errorResponse('A function of that name exists in the connection.'),
          503: errorResponse('The OPC UA server cannot be reached.'),
        },
      },
    },
    async (request, reply) => {
      const created = await browser.pick(
        request.organization!.id,
        request.params.id,
        request.body,
        actorOf(request),
      );
      return reply.code(201).send({ data: created });
    },
  );
};
