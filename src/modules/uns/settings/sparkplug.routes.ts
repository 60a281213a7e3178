import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { SparkplugHost } from '../../sparkplug/sparkplug-host.js';
import { formatRfc3339Micros } from '../rfc3339.js';

const Time = Type.Union([Type.String({ format: 'date-time' }), Type.Null()]);

const Node = Type.Object({
  groupId: Type.String(),
  edgeNodeId: Type.String(),
  topic: Type.String({ description: 'Where its metrics are in the UNS: `v1/<group_id>/<edge_node_id>`.' }),
  online: Type.Boolean(),
  lastBirthAt: Time,
  lastDeathAt: Time,
  bdSeq: Type.Union([Type.String(), Type.Null()], {
    description: 'The birth-death sequence of the current session.',
  }),
  seqErrors: Type.Integer({
    description: 'Messages that arrived out of sequence (each asked for a rebirth).',
  }),
  nullValues: Type.Integer({
    description:
      'Metric values of the node and its devices sent with is_null: the UNS keeps no null, so they are counted here and not stored.',
  }),
  metrics: Type.Integer({ description: 'Metrics the node registered in its NBIRTH.' }),
  devices: Type.Array(
    Type.Object({
      deviceId: Type.String(),
      topic: Type.String(),
      online: Type.Boolean(),
      lastBirthAt: Time,
      metrics: Type.Integer(),
    }),
  ),
});

const time = (ms: number | null) => (ms === null ? null : formatRfc3339Micros(ms * 1000));

/** `GET /api/v1/uns/sparkplug/nodes`: the Sparkplug B edge nodes and devices this replica's broker has heard. */
export const sparkplugRoutes: FastifyPluginAsyncTypebox<{ host: SparkplugHost }> = async (app, { host }) => {
  app.get(
    '/nodes',
    {
      config: { access: { scope: 'uns:read' } },
      schema: {
        tags: ['UNS broker'],
        summary: 'Sparkplug B edge nodes',
        description:
          "Edge nodes and their devices as the embedded broker's host application knows them: online, last birth and death, bdSeq, sequence errors, metrics.",
        response: { 200: Type.Object({ data: Type.Array(Node) }) },
      },
    },
    async (request) => ({
      data: host.nodes(request.organization!.id).map((node) => ({
        ...node,
        lastBirthAt: time(node.lastBirthAt),
        lastDeathAt: time(node.lastDeathAt),
        devices: node.devices.map((d) => ({ ...d, lastBirthAt: time(d.lastBirthAt) })),
      })),
    }),
  );
};
