import { Type } from 'typebox';
import { Timestamp } from '../../platform/schemas.js';

const ENTITY_TYPES = [
  'connection',
  'function',
  'model',
  'pipeline',
  'folder',
  'dashboard',
  'settings',
] as const;
const EntityTypeSchema = Type.Union(
  ENTITY_TYPES.map((t) => Type.Literal(t)),
  {
    description:
      'A function travels inside its connection; `settings` (no id) are the organization settings.',
  },
);

const SelectionItem = Type.Object(
  {
    type: EntityTypeSchema,
    id: Type.Optional(Type.String({ maxLength: 100, description: 'The entity id; omitted for `settings`.' })),
  },
  { additionalProperties: false },
);

export const ExportBody = Type.Object(
  {
    select: Type.Array(SelectionItem, { minItems: 1, maxItems: 5000, description: 'What to export.' }),
    include: Type.Optional(
      Type.Array(SelectionItem, { maxItems: 5000, description: 'Optional entities (from analyze) to add.' }),
    ),
    description: Type.Optional(Type.String({ maxLength: 500 })),
  },
  { additionalProperties: false },
);

const AnalyzedEntity = Type.Object({
  type: EntityTypeSchema,
  id: Type.String(),
  key: Type.String({ description: 'The bundle key (`type:name`) the entity has in a bundle.' }),
  name: Type.String(),
  reason: Type.String(),
});

export const Analysis = Type.Object({
  selected: Type.Array(AnalyzedEntity),
  required: Type.Array(AnalyzedEntity, {
    description: 'Referenced by the selection: always exported with it.',
  }),
  optional: Type.Array(AnalyzedEntity, {
    description:
      'Entities that use what is exported, and the organization settings: add them with `include`.',
  }),
  missing: Type.Array(Type.Object({ from: Type.String(), type: EntityTypeSchema, id: Type.String() }), {
    description: 'References to entities that no longer exist (exported as `$ref: null`).',
  }),
  totals: Type.Record(Type.String(), Type.Integer(), { description: 'Entities exported, by type.' }),
});

export const ExportSummary = Type.Object({
  id: Type.String({ format: 'uuid' }),
  status: Type.Literal('ready'),
  description: Type.String(),
  formatVersion: Type.Integer(),
  entityCount: Type.Integer(),
  size: Type.Integer({ description: 'Bytes of the bundle file.' }),
  checksum: Type.String({ description: '`sha256:<hex>` over the canonical serialization of the bundle.' }),
  createdAt: Timestamp,
  createdBy: Type.Union([Type.String(), Type.Null()]),
  expiresAt: Timestamp,
});

const Policy = Type.Union([
  Type.Literal('skip'),
  Type.Literal('overwrite'),
  Type.Literal('rename'),
  Type.Literal('fail'),
]);

export const ImportOptionsSchema = Type.Object(
  {
    match: Type.Optional(
      Type.Union([Type.Literal('name'), Type.Literal('id')], {
        description: 'Match bundle entities to existing ones by name (default) or by their source id.',
      }),
    ),
    conflict: Type.Optional(
      Type.Union([Policy], { description: 'For an entity that matches one (default fail).' }),
    ),
    overrides: Type.Optional(
      Type.Record(Type.String(), Policy, { description: 'Per bundle key, over `conflict`.' }),
    ),
    bindings: Type.Optional(
      Type.Record(Type.String(), Type.String(), {
        description: 'A bundle connection key → an existing connection id to use instead of importing it.',
      }),
    ),
    activate: Type.Optional(
      Type.Boolean({
        description: 'Keep pipelines enabled and start autoStart connections (default false).',
      }),
    ),
    inputs: Type.Optional(
      Type.Record(Type.String(), Type.String(), {
        description:
          'Validate only: the inputs you have, so that missingInputs lists the rest. Never stored.',
      }),
    ),
  },
  { additionalProperties: false },
);

export const ValidateBody = Type.Object(
  {
    bundle: Type.Unknown({ description: 'The bundle, as downloaded from an export.' }),
    options: Type.Optional(ImportOptionsSchema),
  },
  { additionalProperties: false },
);

const PlanAction = Type.Object({
  key: Type.String(),
  type: EntityTypeSchema,
  name: Type.String(),
  action: Type.Union(['create', 'update', 'skip', 'rename', 'bind'].map((a) => Type.Literal(a))),
  targetId: Type.String({
    description: 'The id in this organization (existing, or the one a create will use).',
  }),
  newName: Type.Union([Type.String(), Type.Null()]),
});

const Problem = Type.Object({
  key: Type.Union([Type.String(), Type.Null()]),
  code: Type.String({
    description:
      'unsupported_format_version, checksum_mismatch, unsupported_protocol, unknown_node_type, unresolved_reference, invalid_binding, egress_denied (a connection whose host is an address the egress policy denies), conflict',
  }),
  message: Type.String(),
});

export const ValidateResult = Type.Object({
  planId: Type.Union([Type.String({ format: 'uuid' }), Type.Null()], {
    description: 'Null when the plan cannot be executed.',
  }),
  expiresAt: Type.Union([Timestamp, Type.Null()]),
  formatVersion: Type.Integer(),
  actions: Type.Array(PlanAction),
  requiredInputs: Type.Array(Type.String()),
  missingInputs: Type.Array(Type.String(), { description: 'Required inputs not given in options.inputs.' }),
  problems: Type.Array(Problem),
  canExecute: Type.Boolean(),
});

export const ExecuteBody = Type.Object(
  {
    planId: Type.String({ format: 'uuid' }),
    inputs: Type.Optional(
      Type.Record(Type.String(), Type.String({ maxLength: 10_000 }), {
        description: 'Secret values by input key (`secret:<entity key>:<path>`); never stored in the plan.',
      }),
    ),
  },
  { additionalProperties: false },
);

export const ImportReport = Type.Object({
  importId: Type.String(),
  executedAt: Timestamp,
  created: Type.Integer(),
  updated: Type.Integer(),
  skipped: Type.Integer(),
  renamed: Type.Integer(),
  bound: Type.Integer(),
  actions: Type.Array(PlanAction),
  idMap: Type.Record(Type.String(), Type.String(), { description: 'Bundle key → id in this organization.' }),
});

export const PlanView = Type.Object({
  planId: Type.String(),
  status: Type.Union([Type.Literal('planned'), Type.Literal('completed')]),
  plan: Type.Object({
    actions: Type.Array(PlanAction),
    requiredInputs: Type.Array(Type.String()),
    problems: Type.Array(Problem),
  }),
  result: Type.Union([ImportReport, Type.Null()]),
  createdAt: Timestamp,
  expiresAt: Timestamp,
});
