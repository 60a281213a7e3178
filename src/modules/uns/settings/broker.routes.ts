import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { BrokerManager } from '../mqtt/broker-manager.js';
import type { UnsSettingsService } from './uns-settings.service.js';

const BrokerMode = Type.Union([Type.Literal('embedded'), Type.Literal('external'), Type.Literal('disabled')]);
const Rate = Type.Object({ total: Type.Integer(), perSecond: Type.Number() });

const BrokerStatus = Type.Object({
  mode: BrokerMode,
  state: Type.String({ description: 'listening, connected, connecting, disconnected, stopped or failed.' }),
  address: Type.Union([Type.String(), Type.Null()]),
  clients: Type.Union([Type.Integer(), Type.Null()], { description: 'Connected clients (embedded only).' }),
  error: Type.Union([Type.String(), Type.Null()]),
  messages: Type.Record(Type.String(), Rate, {
    description: 'By kind (received, delivered, refused): total since start and per second over 10 s.',
  }),
});

const Settings = Type.Object({
  storage: Type.Object({
    backend: Type.Union([Type.Literal('sqlite'), Type.Literal('postgres')]),
    location: Type.String(),
    historian: Type.String({ description: 'sqlite-file, partitioned or hypertable.' }),
    historianLocation: Type.String(),
    compression: Type.Optional(
      Type.Object(
        {
          enabled: Type.Boolean({
            description: 'MERIDIAN_UNS_COMPRESS: the background job compacts complete days.',
          }),
          compressAfterSeconds: Type.Integer({
            description:
              'MERIDIAN_UNS_COMPRESS_AFTER: a UTC day is compacted once its end is this far in the past.',
          }),
          values: Type.Integer({ description: 'Values held in compressed segments.' }),
          segments: Type.Integer({ description: 'Segments (one a topic and UTC day).' }),
          bytesAsRows: Type.Integer({
            description:
              'What the compressed values took as rows (their columns, without indexes and pages).',
          }),
          bytesAsSegments: Type.Integer({ description: 'What the compressed values take as segments.' }),
          bytesPerValue: Type.Union([Type.Number(), Type.Null()], {
            description: 'bytesAsSegments / values; null while nothing is compressed.',
          }),
          lastCompaction: Type.Union(
            [
              Type.Object({
                at: Type.String({ format: 'date-time' }),
                values: Type.Integer({ description: 'Values this run compacted.' }),
                segments: Type.Integer({ description: 'Segments this run wrote.' }),
              }),
              Type.Null(),
            ],
            {
              description: "The last run of this replica's compaction job since it started; null: none yet.",
            },
          ),
        },
        { description: 'The historian compressed: figures over every segment (read at most every 10 s).' },
      ),
    ),
  }),
  retentionDays: Type.Integer({ description: 'Days values are kept, by declared timestamp; 0: forever.' }),
  broker: Type.Object({
    mode: BrokerMode,
    mqttPort: Type.Integer(),
    mqttUrl: Type.Union([Type.String(), Type.Null()], { description: 'Password redacted.' }),
  }),
});

const SettingsChange = Type.Object(
  {
    retentionDays: Type.Optional(Type.Integer({ minimum: 0, maximum: 36500 })),
    broker: Type.Optional(
      Type.Object(
        {
          mode: BrokerMode,
          mqttPort: Type.Optional(Type.Integer({ minimum: 1, maximum: 65535 })),
          mqttUrl: Type.Optional(
            Type.Union([Type.String({ maxLength: 2000, pattern: '^[^\\u0000-\\u001f]*$' }), Type.Null()]),
          ),
        },
        { additionalProperties: false },
      ),
    ),
  },
  { additionalProperties: false },
);

/** `GET /api/v1/uns/broker`: status of the MQTT broker. */
export const brokerRoutes: FastifyPluginAsyncTypebox<{ broker: BrokerManager }> = async (app, { broker }) => {
  app.get(
    '/',
    {
      config: { access: { scope: 'uns:read' } },
      schema: {
        tags: ['UNS broker'],
        summary: 'MQTT broker status',
        description: 'Mode, connection state, connected clients and message rates.',
        response: { 200: Type.Object({ data: BrokerStatus }) },
      },
    },
    async () => ({ data: broker.status() }),
  );
};

/** `GET|PUT /api/v1/system/uns/settings`: storage backend, retention and broker (System Administrator). */
export const unsSettingsRoutes: FastifyPluginAsyncTypebox<{ settings: UnsSettingsService }> = async (
  app,
  { settings },
) => {
  const access = { scope: 'system:admin', systemAdmin: true } as const;
  app.get(
    '/',
    {
      config: { access },
      schema: {
        tags: ['UNS settings'],
        summary: 'UNS settings',
        response: { 200: Type.Object({ data: Settings }) },
      },
    },
    async () => ({ data: await settings.view() }),
  );
  app.put(
    '/',
    {
      config: { access },
      schema: {
        tags: ['UNS settings'],
        summary: 'Change UNS settings',
        description:
          'Retention and broker (embedded on a port, external URL, or disabled). A broker change applies at once; stored settings take precedence over the environment.',
        body: SettingsChange,
        response: { 200: Type.Object({ data: Settings }) },
      },
    },
    async (request) => ({ data: await settings.update(request.body, request.principal?.userId ?? null) }),
  );
};
