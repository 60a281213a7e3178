import { Type } from 'typebox';
import { listQuerySchema, PaginationSchema } from '../../../platform/list-query.js';
import { Timestamp } from '../../../platform/schemas.js';

const NodeSettingsSchema = Type.Object(
  {
    timeoutSeconds: Type.Optional(Type.Integer({ minimum: 1, maximum: 600, description: 'Default 10.' })),
    retry: Type.Optional(
      Type.Object({
        maxTries: Type.Optional(Type.Integer({ minimum: 1, maximum: 10 })),
        waitMs: Type.Optional(Type.Integer({ minimum: 0, maximum: 300_000 })),
        backoff: Type.Optional(Type.Union([Type.Literal('fixed'), Type.Literal('exponential')])),
      }),
    ),
    onError: Type.Optional(
      Type.Union([Type.Literal('stop'), Type.Literal('continue'), Type.Literal('errorPort')], {
        description:
          'stop: the execution fails; continue: the input goes on; errorPort: `{error, input}` leaves by `error`.',
      }),
    ),
  },
  { additionalProperties: false },
);

export const PipelineNodeSchema = Type.Object({
  id: Type.String({ pattern: '^[A-Za-z0-9_-]{1,64}$' }),
  name: Type.String({
    minLength: 1,
    maxLength: 100,
    description: 'Unique in the pipeline; the key of `$node`.',
  }),
  type: Type.String({ description: 'A node type of `GET /api/v1/engine/nodes`.' }),
  parameters: Type.Optional(
    Type.Record(Type.String(), Type.Unknown(), {
      description: "Checked against the type's JSON Schema on enable.",
    }),
  ),
  settings: Type.Optional(NodeSettingsSchema),
  position: Type.Optional(Type.Object({ x: Type.Number(), y: Type.Number() })),
  notes: Type.Optional(Type.String({ maxLength: 2000 })),
  disabled: Type.Optional(Type.Boolean({ description: 'A disabled node passes its input through.' })),
});

export const PipelineEdgeSchema = Type.Object({
  id: Type.Optional(Type.String()),
  source: Type.String(),
  sourcePort: Type.Optional(Type.String({ description: 'Default `out`.' })),
  target: Type.String(),
});

export const PipelineSettingsSchema = Type.Object(
  {
    concurrency: Type.Optional(
      Type.Object({
        mode: Type.Union([
          Type.Literal('queue'),
          Type.Literal('skip'),
          Type.Literal('restart'),
          Type.Literal('parallel'),
        ]),
        max: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000 })),
      }),
    ),
    historyDetail: Type.Optional(
      Type.Union([Type.Literal('minimal'), Type.Literal('standard'), Type.Literal('full')], {
        description:
          'minimal: no node runs (failed ones only); standard: status and timing; full: inputs and outputs.',
      }),
    ),
    timeoutSeconds: Type.Optional(Type.Integer({ minimum: 1, maximum: 86_400 })),
    priority: Type.Optional(Type.Union([Type.Literal('high'), Type.Literal('normal'), Type.Literal('low')])),
    defaults: Type.Optional(NodeSettingsSchema),
  },
  { additionalProperties: false },
);

const content = {
  name: Type.String({
    minLength: 3,
    maxLength: 100,
    description: 'Unique in the organization, ignoring case.',
  }),
  description: Type.Optional(Type.Union([Type.String({ maxLength: 500 }), Type.Null()])),
  labels: Type.Optional(Type.Record(Type.String(), Type.String(), { description: 'At most 20 pairs.' })),
  enabled: Type.Optional(Type.Boolean({ description: 'Default false; needs a valid graph.' })),
  settings: Type.Optional(PipelineSettingsSchema),
  nodes: Type.Optional(Type.Array(PipelineNodeSchema)),
  edges: Type.Optional(Type.Array(PipelineEdgeSchema)),
};

export const CreatePipelineBody = Type.Object(content);
export const UpdatePipelineBody = Type.Object({
  ...content,
  version: Type.Integer({ description: 'The version this change is based on; another one answers 409.' }),
});
export const ClonePipelineBody = Type.Object({ name: Type.Optional(Type.String()) });
export const ExecuteBody = Type.Object(
  {
    input: Type.Optional(Type.Unknown({ description: "The manual trigger's output." })),
    nodeId: Type.Optional(Type.String({ description: 'Which manual trigger (default: the first).' })),
    force: Type.Optional(
      Type.Boolean({
        description:
          'Run even while the organization is in maintenance (otherwise the run is recorded as `skipped` with the reason `maintenance`). Owners and Admins only: 403 for other roles.',
      }),
    ),
    debug: Type.Optional(
      Type.Boolean({
        description:
          "Keep every node's input and output for this run, whatever the pipeline's `historyDetail` (the console's Run now, to show each node's output); the trigger's `source` says `debug: true`.",
      }),
    ),
  },
  { additionalProperties: false },
);

export const GraphProblemSchema = Type.Object({
  nodeId: Type.Union([Type.String(), Type.Null()]),
  path: Type.String({ description: 'JSON pointer into the pipeline.' }),
  message: Type.String(),
});

export const Pipeline = Type.Object({
  id: Type.String({ format: 'uuid' }),
  name: Type.String(),
  description: Type.Union([Type.String(), Type.Null()]),
  labels: Type.Record(Type.String(), Type.String()),
  enabled: Type.Boolean(),
  settings: Type.Unknown(),
  nodes: Type.Array(Type.Unknown()),
  edges: Type.Array(Type.Unknown()),
  problems: Type.Array(GraphProblemSchema, {
    description: 'What keeps the graph from being enabled (empty: valid).',
  }),
  version: Type.Integer(),
  createdAt: Timestamp,
  createdBy: Type.Union([Type.String(), Type.Null()]),
  updatedAt: Timestamp,
  updatedBy: Type.Union([Type.String(), Type.Null()]),
});

export const ListPipelinesQuery = listQuerySchema(['name', 'createdAt', 'updatedAt'] as const, {
  enabled: Type.Optional(Type.Boolean()),
  label: Type.Optional(Type.String({ maxLength: 200, description: '`key` or `key=value`.' })),
});

export const PipelineList = Type.Object({
  data: Type.Array(Type.Object({ ...Pipeline.properties, nodeCount: Type.Integer() })),
  pagination: PaginationSchema,
});

export const PipelineErrorBody = Type.Object({
  error: Type.String(),
  message: Type.String(),
  path: Type.Optional(Type.String({ description: 'JSON pointer of the member at fault.' })),
  problems: Type.Optional(
    Type.Array(GraphProblemSchema, { description: 'Every graph problem, with its node.' }),
  ),
  currentVersion: Type.Optional(Type.Integer()),
});
