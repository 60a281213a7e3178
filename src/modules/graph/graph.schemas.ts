import { Type } from 'typebox';
import { ENTITY_TYPES, REFERENCE_KINDS } from './edges/references.js';
import { IMPACT_ACTIONS } from './impact/impact.js';

export const tags = ['Dependency graph'];

export const EntityTypeSchema = Type.Unsafe<(typeof ENTITY_TYPES)[number]>({
  type: 'string',
  enum: [...ENTITY_TYPES],
  description: 'An entity type; topics (paths and filters) are nodes too.',
});

const RelationSchema = Type.Unsafe<string>({
  type: 'string',
  enum: [...REFERENCE_KINDS, 'matches'],
  description:
    'How `from` refers to `to`. `publishes` and `binds-topic` make the topic depend on the entity; `matches` links a filter that is read to a published topic it overlaps.',
});

const Unresolved = Type.Object({
  relation: RelationSchema,
  targetType: EntityTypeSchema,
  via: Type.String(),
  expression: Type.Union([Type.String(), Type.Null()]),
});

const nodeMembers = {
  key: Type.String({ description: '`<type>:<id>`; what edges and paths name.' }),
  type: EntityTypeSchema,
  id: Type.Union([Type.String(), Type.Null()], {
    description: 'The entity id, or the topic path or filter; null for a redacted topic.',
  }),
  name: Type.Union([Type.String(), Type.Null()]),
  status: Type.Optional(
    Type.Union([Type.String(), Type.Null()], {
      description: 'Connections: `running` or `stopped` (desired state); pipelines: `enabled` or `disabled`.',
    }),
  ),
  connectionId: Type.Optional(Type.String({ description: "A function's connection." })),
  missing: Type.Optional(
    Type.Boolean({
      description: 'Referred to, but the organization has no such entity (deleted, or never).',
    }),
  ),
  redacted: Type.Optional(Type.Boolean({ description: 'The caller lacks the read scope of this type.' })),
  filter: Type.Optional(Type.Boolean({ description: 'A topic filter (`+`, `#`).' })),
  unresolved: Type.Optional(
    Type.Array(Unresolved, { description: 'References given as `{{ expr }}`: known only when it runs.' }),
  ),
};

export const NodeViewSchema = Type.Object(nodeMembers);

export const FocusQuery = Type.Object(
  {
    focus: Type.String({
      minLength: 3,
      maxLength: 1100,
      description: '`<type>:<id>`, e.g. `pipeline:4f…` or `topic:v1/plant/+/temp`.',
    }),
    depth: Type.Optional(Type.Integer({ minimum: 1, maximum: 5, default: 2, description: 'Steps, 1 to 5.' })),
    direction: Type.Optional(
      Type.Unsafe<'dependencies' | 'dependents' | 'both'>({
        type: 'string',
        enum: ['dependencies', 'dependents', 'both'],
        default: 'both',
        description: 'What the focus depends on, what depends on it, or both.',
      }),
    ),
  },
  { additionalProperties: false },
);

export const FocusedGraph = Type.Object({
  data: Type.Object({
    focus: Type.String(),
    depth: Type.Integer(),
    direction: Type.String(),
    nodes: Type.Array(
      Type.Object({ ...nodeMembers, depth: Type.Integer({ description: 'Steps from the focus.' }) }),
    ),
    edges: Type.Array(
      Type.Object({
        from: Type.String(),
        to: Type.String(),
        relation: RelationSchema,
        via: Type.Union([Type.String(), Type.Null()], {
          description: 'What holds the reference: a node name, a panel id, a field path.',
        }),
        dependent: Type.String({ description: 'Of `from` and `to`, the one that depends on the other.' }),
        disabled: Type.Optional(Type.Boolean({ description: 'The pipeline node holding it is disabled.' })),
      }),
    ),
  }),
});

export const EntityParams = Type.Object({
  type: EntityTypeSchema,
  id: Type.String({
    minLength: 1,
    maxLength: 1024,
    description: 'The entity id; for a topic its path or filter, URL-encoded (`v1%2Fplant%2Ftemp`).',
  }),
});

const TypesList = Type.Optional(
  Type.String({
    maxLength: 200,
    description: 'Comma-separated entity types to list (default: all).',
  }),
);

export const RelatedQuery = Type.Object(
  {
    transitive: Type.Optional(
      Type.Boolean({ default: false, description: 'Follow the whole chain, not only direct relations.' }),
    ),
    types: TypesList,
  },
  { additionalProperties: false },
);

export const RelatedList = Type.Object({
  data: Type.Array(
    Type.Object({
      entity: NodeViewSchema,
      depth: Type.Integer({ description: '1 for a direct relation.' }),
      relation: RelationSchema,
      via: Type.Union([Type.String(), Type.Null()]),
      path: Type.Array(Type.String(), {
        description: 'Node keys from the dependent to what it depends on, through every step between.',
      }),
    }),
  ),
});

export const ImpactBody = Type.Object(
  {
    action: Type.Unsafe<(typeof IMPACT_ACTIONS)[number]>({
      type: 'string',
      enum: [...IMPACT_ACTIONS],
      description: 'delete (any entity), stop (connections), disable (pipelines), update (any).',
    }),
    entity: Type.Object(
      {
        type: EntityTypeSchema,
        id: Type.String({ minLength: 1, maxLength: 1024 }),
      },
      { additionalProperties: false },
    ),
    proposed: Type.Optional(
      Type.Unsafe<Record<string, unknown>>({
        type: 'object',
        description:
          "`update` only: the proposed body of the entity (members as in its PUT; absent ones are unchanged). Read: a connection's `protocol` and `readOnly`; a function's `type`, `parameters` and `uns`; a model's `fields`; a pipeline's `nodes` and `enabled`. Each dependent is then `breaks` (the change removes what it uses), `degrades` (it keeps working differently) or `info`, the reason naming the member. Without it every dependent of an update is `info`. A member the type does not have, or of the wrong type, is 400.",
      }),
    ),
  },
  { additionalProperties: false },
);

const Severity = Type.Unsafe<'breaks' | 'degrades' | 'info'>({
  type: 'string',
  enum: ['breaks', 'degrades', 'info'],
  description:
    '`breaks`: it uses the entity itself and stops working; `degrades`: it depends through something else or only on data; `info`: inactive, or goes along with it.',
});

export const ImpactSchema = Type.Object({
  entity: NodeViewSchema,
  action: Type.String(),
  affected: Type.Array(
    Type.Object({
      entity: NodeViewSchema,
      severity: Severity,
      reason: Type.String(),
      path: Type.Array(
        Type.Object({
          ...nodeMembers,
          relation: Type.Optional(RelationSchema),
          via: Type.Optional(Type.Union([Type.String(), Type.Null()])),
        }),
        {
          description:
            'From the affected entity to the one acted on; each step names its relation to the next.',
        },
      ),
    }),
  ),
  summary: Type.Object({ breaks: Type.Integer(), degrades: Type.Integer(), info: Type.Integer() }),
  blocking: Type.Boolean({
    description: 'A delete or stop is refused (409) unless forced; always false for an update.',
  }),
});

export const ImpactResponse = Type.Object({ data: ImpactSchema });

/** The 409 of a delete or stop that others depend on. */
export const ImpactConflictBody = Type.Object({
  error: Type.String(),
  message: Type.String(),
  impact: Type.Optional(ImpactSchema),
});

export const OrphansQuery = Type.Object(
  {
    types: TypesList,
    quietDays: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: 3650,
        default: 30,
        description:
          'Topics: one nothing reads, publishes or binds is unused only if it received no value in this many days.',
      }),
    ),
  },
  { additionalProperties: false },
);

export const OrphanList = Type.Object({
  data: Type.Array(Type.Object({ entity: NodeViewSchema, reason: Type.String() })),
});

/** `force=true`: delete or stop even though others depend on it. */
export const ForceQuery = Type.Object(
  {
    force: Type.Optional(
      Type.Boolean({
        description: 'Go ahead although active entities depend on it (else 409 with the impact).',
      }),
    ),
  },
  { additionalProperties: false },
);
