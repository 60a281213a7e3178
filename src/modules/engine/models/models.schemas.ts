import { Type } from 'typebox';
import { listQuerySchema, PaginationSchema } from '../../../platform/list-query.js';
import { Timestamp } from '../../../platform/schemas.js';
import { FIELD_TYPES } from './model-fields.js';

const Shape = {
  type: Type.Union(
    FIELD_TYPES.map((t) => Type.Literal(t)),
    {
      description:
        '`object` has `fields`, `array` has `items` (a shape: type and its members), `enum` has `enum`, `model` has `model`.',
    },
  ),
  constraints: Type.Optional(
    Type.Object(
      {
        min: Type.Optional(Type.Number({ description: 'Inclusive; number and integer fields.' })),
        max: Type.Optional(Type.Number({ description: 'Inclusive; number and integer fields.' })),
        maxLength: Type.Optional(Type.Integer({ minimum: 0, description: 'String fields.' })),
        pattern: Type.Optional(
          Type.String({
            maxLength: 500,
            description: 'String fields; RE2 syntax (no back-references or look-around).',
          }),
        ),
      },
      { additionalProperties: false },
    ),
  ),
  enum: Type.Optional(Type.Array(Type.Union([Type.String(), Type.Number()]), { maxItems: 200 })),
  fields: Type.Optional(
    Type.Array(Type.Unknown(), { description: 'Nested fields of an `object` (Field objects).' }),
  ),
  items: Type.Optional(
    Type.Unknown({ description: 'The item shape of an `array`: `{type, ...}` without a name.' }),
  ),
  model: Type.Optional(
    Type.Object(
      {
        id: Type.String({ format: 'uuid' }),
        version: Type.Optional(
          Type.Integer({ minimum: 1, description: 'Pinned version; without: the current one.' }),
        ),
      },
      { additionalProperties: false },
    ),
  ),
};

export const ModelFieldSchema = Type.Object(
  {
    name: Type.String({
      description:
        'A topic segment: 1 to 128 characters without "/", "+", "#" or control characters; unique among its siblings.',
    }),
    ...Shape,
    description: Type.Optional(Type.String({ maxLength: 1000 })),
    required: Type.Optional(Type.Boolean()),
    default: Type.Optional(Type.Unknown({ description: "Must satisfy the field's own rules." })),
    unit: Type.Optional(Type.String({ maxLength: 32 })),
    staleAfterSeconds: Type.Optional(Type.Integer({ minimum: 1 })),
  },
  { additionalProperties: false, $id: 'ModelField' },
);

const content = {
  name: Type.String({ description: '2 to 100 characters, unique in the organization (ignoring case).' }),
  description: Type.Optional(Type.Union([Type.String({ maxLength: 1000 }), Type.Null()])),
  labels: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 50 }), { maxItems: 20 })),
  fields: Type.Optional(Type.Array(ModelFieldSchema, { maxItems: 500 })),
};

export const CreateModelBody = Type.Object(content, { additionalProperties: false });
export const UpdateModelBody = Type.Object(
  {
    ...content,
    version: Type.Integer({
      minimum: 1,
      description: 'The version this change is based on; another one answers 409.',
    }),
  },
  { additionalProperties: false },
);
export const CloneModelBody = Type.Object({ name: Type.String() }, { additionalProperties: false });

const modelMeta = {
  id: Type.String({ format: 'uuid' }),
  name: Type.String(),
  description: Type.Union([Type.String(), Type.Null()]),
  labels: Type.Array(Type.String()),
  version: Type.Integer({ description: 'The current version.' }),
  createdAt: Timestamp,
  createdBy: Type.Union([Type.String(), Type.Null()]),
  updatedAt: Timestamp,
  updatedBy: Type.Union([Type.String(), Type.Null()]),
};

export const Model = Type.Object({ ...modelMeta, fields: Type.Array(Type.Unknown()) });
export const ModelListItem = Type.Object({ ...modelMeta, fieldCount: Type.Integer() });
export const ModelList = Type.Object({ data: Type.Array(ModelListItem), pagination: PaginationSchema });

export const ListModelsQuery = listQuerySchema(['name', 'createdAt', 'updatedAt', 'version'] as const, {
  label: Type.Optional(
    Type.String({ minLength: 1, maxLength: 50, description: 'Only models with this label (ignoring case).' }),
  ),
});

export const AcknowledgeQuery = Type.Object(
  {
    acknowledgeBreaking: Type.Optional(
      Type.Boolean({
        description: 'Apply a breaking change to a bound model (or delete it with its bindings).',
      }),
    ),
  },
  { additionalProperties: false },
);

export const VersionQuery = Type.Object(
  {
    version: Type.Optional(
      Type.Integer({ minimum: 1, maximum: 2_147_483_647, description: 'Default: current.' }),
    ),
  },
  { additionalProperties: false },
);

export const ValidateBody = Type.Object(
  {
    value: Type.Unknown({ description: 'The value to check against the model.' }),
    version: Type.Optional(Type.Integer({ minimum: 1, maximum: 2_147_483_647 })),
  },
  { additionalProperties: false, required: ['value'] },
);

export const ValidateResult = Type.Object({
  data: Type.Object({
    valid: Type.Boolean(),
    errors: Type.Array(
      Type.Object({
        path: Type.String({ description: 'JSON pointer (RFC 6901) into the value.' }),
        message: Type.String(),
      }),
    ),
  }),
});

export const BindBody = Type.Object(
  {
    topicPrefix: Type.String({ maxLength: 1024, description: 'A topic such as `v1/acme/plant1/pump41`.' }),
    mode: Type.Optional(
      Type.Union([Type.Literal('normal'), Type.Literal('strict')], {
        description: 'normal: violations lower quality to 1 and are recorded; strict: refused.',
      }),
    ),
  },
  { additionalProperties: false },
);

export const ModelBinding = Type.Object({
  id: Type.String({ format: 'uuid' }),
  modelId: Type.String({ format: 'uuid' }),
  topicPrefix: Type.String(),
  mode: Type.Union([Type.Literal('normal'), Type.Literal('strict')]),
  modelVersion: Type.Integer({ description: 'The model version the schema bindings were made from.' }),
  leaves: Type.Array(
    Type.Object({
      path: Type.String({ description: 'The field path below the prefix.' }),
      filter: Type.String({ description: 'The topic of the UNS schema binding.' }),
      schema: Type.String({ description: 'The UNS schema name.' }),
      schemaVersion: Type.Integer(),
    }),
  ),
  createdAt: Timestamp,
  createdBy: Type.Union([Type.String(), Type.Null()]),
  updatedAt: Timestamp,
});

export const BindResult = Type.Object({
  data: Type.Object({
    ...ModelBinding.properties,
    skipped: Type.Array(Type.Object({ path: Type.String(), reason: Type.String() }), {
      description: 'Fields without a topic (arrays).',
    }),
  }),
});

export const ConflictBody = Type.Object({
  error: Type.String(),
  message: Type.String(),
  currentVersion: Type.Optional(
    Type.Integer({ description: 'On a stale update: the version to base a change on.' }),
  ),
  breakingChanges: Type.Optional(Type.Array(Type.Object({ field: Type.String(), reason: Type.String() }))),
  dependents: Type.Optional(Type.Array(Type.Unknown(), { description: 'What depends on the model.' })),
});

export const BadRequestBody = Type.Object({
  error: Type.String(),
  message: Type.String(),
  path: Type.Optional(Type.String({ description: 'JSON pointer into the body of the member at fault.' })),
});
