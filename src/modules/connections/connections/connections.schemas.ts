import { type Static, Type } from 'typebox';
import { listQuerySchema, PaginationSchema } from '../../../platform/list-query.js';
import { Timestamp } from '../../../platform/schemas.js';

export const RUNTIME_STATES = [
  'idle',
  'connecting',
  'connected',
  'degraded',
  'reconnecting',
  'error',
  'stopping',
] as const;
export type RuntimeState = (typeof RUNTIME_STATES)[number];

/** The runtime states as a schema. */
export const RuntimeStateSchema = Type.Union([
  Type.Literal('idle'),
  Type.Literal('connecting'),
  Type.Literal('connected'),
  Type.Literal('degraded'),
  Type.Literal('reconnecting'),
  Type.Literal('error'),
  Type.Literal('stopping'),
]);

const Labels = Type.Array(Type.String({ minLength: 1, maxLength: 50 }), {
  maxItems: 10,
  uniqueItems: true,
  description: 'At most 10 labels of 1 to 50 characters.',
});
const Config = Type.Record(Type.String(), Type.Unknown(), {
  description:
    'Validated against the protocol\'s configSchema. Secrets are write-only: a field marked x-secret (every password, a REST bearerToken) and each value of a map whose values are marked x-secret (REST headers: the names stay readable). Reads show {"configured": true} in their place; send that back, or leave the field out, to keep the stored secret (a headers map left out keeps every value; a header left out of a headers map sent is removed). A user:password@ in a URL marked x-url-credentials (REST baseUrl, MQTT url, OPC UA endpointUrl) is moved to username and the secret password when saved: the URL reads back without it; a URL naming another user or password than those fields is 400.',
});

/** Why a change is made: recorded with it in the organization's audit log. */
export const ChangeReason = Type.String({
  minLength: 1,
  maxLength: 500,
  description: "Why: recorded with the change in the organization's audit log (1 to 500 characters).",
});

export const Connection = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    name: Type.String(),
    description: Type.String(),
    protocol: Type.String(),
    config: Config,
    labels: Type.Array(Type.String()),
    readOnly: Type.Boolean({
      description:
        'When true every write function is refused (409), and the session itself refuses every write whatever asks: Modbus coil and register writes, OPC UA and S7 writes, MQTT publishes, REST methods other than GET and HEAD; SQL runs each call in a read-only transaction that is rolled back (a query that writes fails with "the connection is read-only").',
    }),
    autoStart: Type.Boolean({ description: 'Start when created, and keep running across restarts.' }),
    desiredState: Type.Union([Type.Literal('running'), Type.Literal('stopped')], {
      description: 'What the runtime supervisor converges to; persists across restarts.',
    }),
    state: RuntimeStateSchema,
    version: Type.Integer({
      minimum: 1,
      description: 'Raised by every change of content; `GET /api/v1/connections/{id}/versions` lists them.',
    }),
    createdAt: Timestamp,
    createdBy: Type.Union([Type.String(), Type.Null()]),
    updatedAt: Timestamp,
    updatedBy: Type.Union([Type.String(), Type.Null()]),
  },
  { $id: 'Connection' },
);
export type Connection = Static<typeof Connection>;

export const CreateConnectionBody = Type.Object(
  {
    name: Type.String({
      minLength: 1,
      maxLength: 100,
      description: 'Unique in the organization, ignoring case.',
    }),
    description: Type.Optional(Type.String({ maxLength: 500 })),
    protocol: Type.String({ minLength: 1, maxLength: 100 }),
    config: Config,
    labels: Type.Optional(Labels),
    readOnly: Type.Optional(Type.Boolean({ default: false })),
    autoStart: Type.Optional(Type.Boolean({ default: false })),
  },
  { additionalProperties: false },
);
export type CreateConnectionBody = Static<typeof CreateConnectionBody>;

export const UpdateConnectionBody = Type.Object(
  {
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
    description: Type.Optional(Type.String({ maxLength: 500 })),
    protocol: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
    config: Type.Optional(Config),
    labels: Type.Optional(Labels),
    readOnly: Type.Optional(Type.Boolean()),
    autoStart: Type.Optional(Type.Boolean()),
    reason: Type.Optional(ChangeReason),
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
export type UpdateConnectionBody = Static<typeof UpdateConnectionBody>;

export const CloneConnectionBody = Type.Object(
  {
    name: Type.Optional(
      Type.String({ minLength: 1, maxLength: 100, description: 'Default: "<name> (copy)".' }),
    ),
  },
  { additionalProperties: false },
);

export const ListConnectionsQuery = listQuerySchema(['name', 'protocol', 'createdAt', 'updatedAt'], {
  protocol: Type.Optional(Type.String({ maxLength: 100 })),
  state: Type.Optional(RuntimeStateSchema),
  label: Type.Optional(Type.String({ maxLength: 50 })),
});
export type ListConnectionsQuery = Static<typeof ListConnectionsQuery>;

export const ConnectionList = Type.Object({ data: Type.Array(Connection), pagination: PaginationSchema });

const Schema = Type.Record(Type.String(), Type.Unknown(), { description: 'A JSON Schema.' });
export const ProtocolList = Type.Object({
  data: Type.Array(
    Type.Object({
      id: Type.String(),
      name: Type.String(),
      category: Type.String(),
      session: Type.String({ description: 'exclusive: one replica runs a connection; pooled: any.' }),
      configSchema: Schema,
      functionTypes: Type.Array(
        Type.Object({
          type: Type.String(),
          direction: Type.Union([Type.Literal('read'), Type.Literal('write'), Type.Literal('subscribe')]),
          description: Type.String(),
          configSchema: Schema,
        }),
      ),
    }),
  ),
});
