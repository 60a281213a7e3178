import { type Static, Type } from 'typebox';
import { listQuerySchema, PaginationSchema } from '../../../platform/list-query.js';
import { Timestamp } from '../../../platform/schemas.js';

export const FunctionParameterSchema = Type.Object(
  {
    name: Type.String({
      pattern: '^[A-Za-z_][A-Za-z0-9_]{0,63}$',
      description: 'Used as ((name)) in config.',
    }),
    type: Type.Union([
      Type.Literal('string'),
      Type.Literal('number'),
      Type.Literal('integer'),
      Type.Literal('boolean'),
    ]),
    required: Type.Optional(Type.Boolean({ default: true })),
    default: Type.Optional(Type.Unknown()),
    description: Type.Optional(Type.String({ maxLength: 500 })),
    enum: Type.Optional(Type.Array(Type.Unknown(), { minItems: 1, maxItems: 100 })),
    min: Type.Optional(Type.Number()),
    max: Type.Optional(Type.Number()),
  },
  { additionalProperties: false },
);

export const UnsTarget = Type.Object(
  {
    topic: Type.String({
      minLength: 1,
      maxLength: 1024,
      description:
        'Read functions: the topic each polled value is published to. Subscribe functions: the prefix under which each item is published (item key appended), unless `items` names its topic.',
    }),
    intervalMs: Type.Optional(
      Type.Integer({
        minimum: 100,
        maximum: 86_400_000,
        description: 'Read functions: the polling interval.',
      }),
    ),
    items: Type.Optional(
      Type.Record(Type.String(), Type.String({ minLength: 1, maxLength: 1024 }), {
        description: 'Subscribe functions: item key (node id, MQTT topic) to UNS topic.',
      }),
    ),
  },
  { additionalProperties: false },
);

const fields = {
  name: Type.String({
    minLength: 1,
    maxLength: 100,
    description: 'Unique in the connection, ignoring case.',
  }),
  description: Type.String({ maxLength: 500 }),
  type: Type.String({ minLength: 1, maxLength: 100, description: "One of the protocol's functionTypes." }),
  config: Type.Record(Type.String(), Type.Unknown(), {
    description:
      "Validated against the function type's configSchema; strings may hold ((parameter)) placeholders.",
  }),
  parameters: Type.Array(FunctionParameterSchema, { maxItems: 50 }),
  uns: Type.Union([UnsTarget, Type.Null()], {
    description: 'Values into the UNS while the connection runs (read: polled; subscribe: every change).',
  }),
};

export const ConnectorFunction = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    connectionId: Type.String({ format: 'uuid' }),
    ...fields,
    direction: Type.Union([Type.Literal('read'), Type.Literal('write'), Type.Literal('subscribe')]),
    version: Type.Integer({ minimum: 1, description: 'Raised by every change; see `.../versions`.' }),
    createdAt: Timestamp,
    createdBy: Type.Union([Type.String(), Type.Null()]),
    updatedAt: Timestamp,
    updatedBy: Type.Union([Type.String(), Type.Null()]),
  },
  { $id: 'ConnectorFunction' },
);
export type ConnectorFunction = Static<typeof ConnectorFunction>;

export const CreateFunctionBody = Type.Object(
  {
    name: fields.name,
    description: Type.Optional(fields.description),
    type: fields.type,
    config: fields.config,
    parameters: Type.Optional(fields.parameters),
    uns: Type.Optional(fields.uns),
  },
  { additionalProperties: false },
);
export type CreateFunctionBody = Static<typeof CreateFunctionBody>;

export const UpdateFunctionBody = Type.Object(
  {
    name: Type.Optional(fields.name),
    description: Type.Optional(fields.description),
    type: Type.Optional(fields.type),
    config: Type.Optional(fields.config),
    parameters: Type.Optional(fields.parameters),
    uns: Type.Optional(fields.uns),
    version: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: 2_147_483_647,
        description:
          'The version this change is based on: another one answers 409 `conflict` and changes nothing. Left out, the change applies to the stored version.',
      }),
    ),
  },
  { additionalProperties: false, minProperties: 1 },
);
export type UpdateFunctionBody = Static<typeof UpdateFunctionBody>;

export const ImportFunctionsBody = Type.Object(
  {
    functions: Type.Optional(
      Type.Array(Type.Unknown(), {
        minItems: 1,
        maxItems: 1000,
        description: 'JSON rows, each like a create body.',
      }),
    ),
    csv: Type.Optional(
      Type.String({
        maxLength: 1_000_000,
        description:
          'CSV with a header row: name,type,description,config,parameters (config and parameters as JSON).',
      }),
    ),
  },
  { additionalProperties: false, minProperties: 1, maxProperties: 1 },
);

export const ExecuteBody = Type.Object(
  {
    parameters: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
    confirmWrites: Type.Optional(Type.Boolean({ description: 'Must be true to run a write function.' })),
  },
  { additionalProperties: false },
);

export const ExecutionResult = Type.Object({
  success: Type.Boolean(),
  value: Type.Unknown(),
  quality: Type.Integer({ minimum: 0, maximum: 2, description: '0 good, 1 uncertain, 2 bad.' }),
  durationMs: Type.Number({ description: 'Milliseconds.' }),
  timestamp: Timestamp,
  error: Type.Optional(Type.String()),
});

export const ListFunctionsQuery = listQuerySchema(['name', 'type', 'createdAt', 'updatedAt'], {
  type: Type.Optional(Type.String({ maxLength: 100 })),
});
export type ListFunctionsQuery = Static<typeof ListFunctionsQuery>;

export const FunctionList = Type.Object({
  data: Type.Array(ConnectorFunction),
  pagination: PaginationSchema,
});

export const FunctionParams = Type.Object({
  id: Type.String({ format: 'uuid' }),
  functionId: Type.String({ format: 'uuid' }),
});

export const PreviewBody = Type.Object(
  {
    type: Type.String({
      minLength: 1,
      maxLength: 100,
      description: "A read type of the protocol's functionTypes.",
    }),
    config: Type.Record(Type.String(), Type.Unknown(), {
      description: "The function's config as a create takes it, with values in place of ((placeholders)).",
    }),
  },
  { additionalProperties: false },
);
