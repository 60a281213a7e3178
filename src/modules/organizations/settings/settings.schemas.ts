import { type Static, Type } from 'typebox';
import { Timestamp } from '../../../platform/schemas.js';

const DateFormat = Type.Union([
  Type.Literal('YYYY-MM-DD'),
  Type.Literal('DD.MM.YYYY'),
  Type.Literal('DD/MM/YYYY'),
  Type.Literal('MM/DD/YYYY'),
]);
const HistoryDetail = Type.Union(
  [Type.Literal('none'), Type.Literal('minimal'), Type.Literal('standard'), Type.Literal('full')],
  { description: 'What an execution records of each node by default.' },
);
const TimeRange = Type.Union([
  Type.Literal('15m'),
  Type.Literal('1h'),
  Type.Literal('6h'),
  Type.Literal('12h'),
  Type.Literal('24h'),
  Type.Literal('7d'),
  Type.Literal('30d'),
]);

const Reason = Type.String({ minLength: 1, maxLength: 500, description: 'Why; 1 to 500 characters.' });

export const MaintenanceState = Type.Object(
  {
    enabled: Type.Boolean(),
    reason: Type.Union([Type.String(), Type.Null()]),
    since: Type.Union([Timestamp, Type.Null()]),
    until: Type.Union([Timestamp, Type.Null()], {
      description: 'When it ends by itself; null: when switched off.',
    }),
    by: Type.Union([Type.String(), Type.Null()], { description: 'The user who switched it on.' }),
  },
  {},
);
export type MaintenanceState = Static<typeof MaintenanceState>;

const ExecutionsFields = {
  retentionDays: Type.Integer({ minimum: 1, maximum: 3650, description: 'Days executions are kept.' }),
  maxCount: Type.Integer({ minimum: 100, maximum: 10_000_000, description: 'Most executions kept.' }),
  defaultHistoryDetail: HistoryDetail,
  maxConcurrent: Type.Integer({ minimum: 1, maximum: 256, description: 'Executions run at once.' }),
};
const ConnectionsFields = {
  stateHistoryRetentionDays: Type.Integer({ minimum: 1, maximum: 3650 }),
};
const DashboardsFields = {
  defaultTimeRange: TimeRange,
  defaultDashboardId: Type.Union([Type.String({ format: 'uuid' }), Type.Null()]),
};
const BrandingFields = {
  accentColor: Type.Union([Type.String({ pattern: '^#[0-9a-fA-F]{6}$' }), Type.Null()], {
    description: 'A #RRGGBB colour for the console, or null for the default.',
  }),
};
const SparkplugId = Type.String({ minLength: 1, maxLength: 64, pattern: '^[^+#/]+$' });
const WriteTargetFields = {
  deviceId: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 64,
      pattern: '^[^+#/]+$',
      description: 'The device whose DCMD it takes; absent: an NCMD to the edge node.',
    }),
  ),
  metric: Type.String({
    minLength: 1,
    maxLength: 512,
    description: "The metric name it takes; ending in '/': every metric whose name starts with it.",
  }),
};
const EdgeWrite = Type.Union(
  [
    Type.Object(
      {
        ...WriteTargetFields,
        topic: Type.String({
          minLength: 1,
          maxLength: 1024,
          description:
            "Publish the value to this UNS topic (for a metric prefix, the rest of the name below it, e.g. 'sp/' + 'sp/a' goes to <topic>/a).",
        }),
      },
      { additionalProperties: false },
    ),
    Type.Object(
      {
        ...WriteTargetFields,
        connectionId: Type.String({ format: 'uuid' }),
        functionId: Type.String({ format: 'uuid', description: 'A write function of the connection.' }),
        parameter: Type.Optional(
          Type.String({
            minLength: 1,
            maxLength: 64,
            description: "The function's parameter that takes the value; default 'value'.",
          }),
        ),
      },
      { additionalProperties: false },
    ),
  ],
  {
    description:
      'Where an NCMD/DCMD write of a metric goes: a UNS topic, or a write function run with confirmWrites (refused on a read-only connection). Audited, accepted or refused.',
  },
);
const EdgeNode = Type.Union(
  [
    Type.Object(
      {
        groupId: SparkplugId,
        edgeNodeId: SparkplugId,
        devices: Type.Array(
          Type.Object(
            {
              deviceId: SparkplugId,
              prefix: Type.String({
                minLength: 1,
                maxLength: 512,
                pattern: '^[^+#]+[^/+#]$',
                description: 'The UNS subtree published as this device, e.g. v1/plant/line1.',
              }),
            },
            { additionalProperties: false },
          ),
          { maxItems: 100 },
        ),
        writes: Type.Optional(
          Type.Array(EdgeWrite, {
            maxItems: 1000,
            description: 'Write targets; a command to a metric none names is refused (and audited).',
          }),
        ),
      },
      { additionalProperties: false },
    ),
    Type.Null(),
  ],
  {
    description:
      'Meridian as a Sparkplug B edge node in the embedded broker: spBv1.0/<groupId>/NBIRTH/<edgeNodeId>, one device per UNS subtree; null: off.',
  },
);
const SparkplugFields = {
  edgeNode: EdgeNode,
  hostId: Type.String({
    minLength: 1,
    maxLength: 64,
    pattern: '^[^+#/]+$',
    description:
      "The Sparkplug B primary host id the embedded broker announces in its retained spBv1.0/STATE/<hostId> (no '+', '#' or '/').",
  }),
};
const TimeZone = Type.String({
  minLength: 1,
  maxLength: 64,
  description: 'IANA time zone (e.g. Europe/Berlin); used by schedules and dashboards.',
});
const Locale = Type.String({ minLength: 2, maxLength: 64, description: 'BCP 47 tag, e.g. en-US.' });

export const OrganizationSettings = Type.Object(
  {
    organizationId: Type.String({ format: 'uuid' }),
    timezone: TimeZone,
    locale: Locale,
    dateFormat: DateFormat,
    executions: Type.Object(ExecutionsFields),
    connections: Type.Object(ConnectionsFields),
    dashboards: Type.Object(DashboardsFields),
    branding: Type.Object(BrandingFields),
    sparkplug: Type.Object(SparkplugFields),
    maintenance: MaintenanceState,
    version: Type.Integer({ description: 'Send it back with PATCH; a stale one answers 409.' }),
    updatedAt: Timestamp,
    updatedBy: Type.Union([Type.String(), Type.Null()]),
  },
  {},
);
export type OrganizationSettings = Static<typeof OrganizationSettings>;

const partial = <T extends Record<string, Parameters<typeof Type.Optional>[0]>>(fields: T) =>
  Type.Object(
    Object.fromEntries(Object.entries(fields).map(([k, v]) => [k, Type.Optional(v)])) as {
      [K in keyof T]: ReturnType<typeof Type.Optional<T[K]>>;
    },
    { additionalProperties: false },
  );

export const PatchSettingsBody = Type.Object(
  {
    version: Type.Integer({ minimum: 1, description: 'The version the change is based on.' }),
    reason: Type.Optional(Reason),
    timezone: Type.Optional(TimeZone),
    locale: Type.Optional(Locale),
    dateFormat: Type.Optional(DateFormat),
    executions: Type.Optional(partial(ExecutionsFields)),
    connections: Type.Optional(partial(ConnectionsFields)),
    dashboards: Type.Optional(partial(DashboardsFields)),
    branding: Type.Optional(partial(BrandingFields)),
    sparkplug: Type.Optional(partial(SparkplugFields)),
  },
  { additionalProperties: false },
);
export type PatchSettingsBody = Static<typeof PatchSettingsBody>;

export const SetMaintenanceBody = Type.Object(
  {
    enabled: Type.Boolean(),
    reason: Type.String({ description: 'Required, 1 to 500 characters, on and off alike.' }),
    until: Type.Optional(
      Type.Union([Type.String({ format: 'date-time' }), Type.Null()], {
        description: 'When maintenance ends by itself (RFC 3339, in the future); only with enabled.',
      }),
    ),
  },
  { additionalProperties: false },
);
export type SetMaintenanceBody = Static<typeof SetMaintenanceBody>;
