import { Type } from 'typebox';
import { listQuerySchema, PaginationSchema } from '../../../platform/list-query.js';
import { Timestamp } from '../../../platform/schemas.js';
import { PANEL_TYPES, REFRESH_INTERVALS, VARIABLE_TYPES } from './dashboard-rules.js';

export const tags = ['Dashboards'];

const Color = Type.String({
  minLength: 1,
  maxLength: 32,
  description: 'A CSS colour: `#rgb`, `#rrggbb`, `#rrggbbaa` or a name such as `red`.',
});

export const GridPos = Type.Object(
  {
    x: Type.Integer({ minimum: 0, maximum: 23, description: 'Column, 0 to 23 (24 columns).' }),
    y: Type.Integer({ minimum: 0, maximum: 10_000, description: 'Row.' }),
    w: Type.Integer({ minimum: 1, maximum: 24, description: 'Width in columns; x + w ≤ 24.' }),
    h: Type.Integer({ minimum: 1, maximum: 50, description: 'Height in rows (30 px each).' }),
  },
  { additionalProperties: false },
);

export const PanelQuery = Type.Object(
  {
    topic: Type.Optional(
      // biome-ignore lint/suspicious/noTemplateCurlyInString: a dashboard variable, written as users write it
      Type.String({ maxLength: 1024, description: 'Topic path; may use variables (`$line`, `${line}`).' }),
    ),
    filter: Type.Optional(
      Type.String({ maxLength: 1024, description: 'Topic filter (`+`, `#`); may use variables.' }),
    ),
    field: Type.Optional(
      Type.String({
        maxLength: 200,
        description: 'Path into object values, e.g. `motor.speed` or `axes[0].load`.',
      }),
    ),
    mode: Type.Optional(
      Type.Unsafe<'aggregate' | 'live'>({
        type: 'string',
        enum: ['aggregate', 'live'],
        description: '`aggregate` (history in buckets, then live) or `live` (latest value only).',
      }),
    ),
    label: Type.Optional(Type.String({ maxLength: 100 })),
  },
  { additionalProperties: false },
);

export const Threshold = Type.Object({ value: Type.Number(), color: Color }, { additionalProperties: false });

export const ValueMapping = Type.Object(
  {
    value: Type.Optional(Type.Union([Type.String({ maxLength: 200 }), Type.Number(), Type.Boolean()])),
    from: Type.Optional(Type.Number()),
    to: Type.Optional(Type.Number()),
    text: Type.Optional(Type.String({ maxLength: 100 })),
    color: Type.Optional(Color),
  },
  { additionalProperties: false, description: 'A value (or the range from..to) shown as text and colour.' },
);

export const FieldConfig = Type.Object(
  {
    unit: Type.Optional(Type.String({ maxLength: 32 })),
    decimals: Type.Optional(Type.Integer({ minimum: 0, maximum: 10 })),
    min: Type.Optional(Type.Number()),
    max: Type.Optional(Type.Number()),
    thresholds: Type.Optional(Type.Array(Threshold, { maxItems: 20 })),
    mappings: Type.Optional(Type.Array(ValueMapping, { maxItems: 50 })),
  },
  {
    additionalProperties: false,
    description: "Unit, min and max default to the topic schema's when left out.",
  },
);

export const Panel = Type.Object(
  {
    id: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 64,
        pattern: '^[A-Za-z0-9_-]+$',
        description: 'Unique in the dashboard; generated when left out.',
      }),
    ),
    type: Type.Unsafe<(typeof PANEL_TYPES)[number]>({ type: 'string', enum: [...PANEL_TYPES] }),
    title: Type.Optional(Type.String({ maxLength: 100 })),
    description: Type.Optional(Type.String({ maxLength: 500 })),
    gridPos: GridPos,
    queries: Type.Optional(Type.Array(PanelQuery, { maxItems: 10 })),
    options: Type.Optional(
      Type.Object(
        {
          content: Type.Optional(
            Type.String({ maxLength: 20_000, description: 'Text panels: Markdown, HTML shown escaped.' }),
          ),
          sparkline: Type.Optional(Type.Boolean({ description: 'Stat panels: draw a sparkline.' })),
          series: Type.Optional(
            Type.Array(Type.Unsafe<'avg' | 'min' | 'max'>({ type: 'string', enum: ['avg', 'min', 'max'] }), {
              maxItems: 3,
              description: 'Time series: which bucket statistics to draw.',
            }),
          ),
          orientation: Type.Optional(
            Type.Unsafe<'horizontal' | 'vertical'>({ type: 'string', enum: ['horizontal', 'vertical'] }),
          ),
        },
        { additionalProperties: false },
      ),
    ),
    fieldConfig: Type.Optional(FieldConfig),
  },
  { additionalProperties: false },
);

export const Variable = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 32, pattern: '^[A-Za-z_][A-Za-z0-9_]*$' }),
    label: Type.Optional(Type.String({ maxLength: 100 })),
    type: Type.Unsafe<(typeof VARIABLE_TYPES)[number]>({ type: 'string', enum: [...VARIABLE_TYPES] }),
    filter: Type.Optional(
      Type.String({
        maxLength: 1024,
        description: 'Segment variables: a filter ending in `+`; the names at that level are the values.',
      }),
    ),
    options: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 200 }), { maxItems: 200 })),
    default: Type.Optional(Type.String({ maxLength: 200 })),
    multi: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);

export const TimeRange = Type.Object(
  {
    from: Type.String({ maxLength: 64, description: '`now`, `now-6h` (s, m, h, d, w) or RFC 3339.' }),
    to: Type.String({ maxLength: 64 }),
  },
  { additionalProperties: false },
);

const Refresh = Type.Unsafe<(typeof REFRESH_INTERVALS)[number]>({
  type: 'string',
  enum: [...REFRESH_INTERVALS],
  description: 'How often the console queries again; live values arrive as they are published.',
});

const Tags = Type.Array(Type.String({ minLength: 1, maxLength: 50 }), { maxItems: 20 });
const FolderId = Type.Union([Type.String({ format: 'uuid' }), Type.Null()], {
  description: 'The folder; null at the top.',
});

const editable = {
  title: Type.String({ minLength: 1, maxLength: 100 }),
  description: Type.String({ maxLength: 2000 }),
  folderId: FolderId,
  tags: Tags,
  timeRange: TimeRange,
  refresh: Refresh,
  variables: Type.Array(Variable, { maxItems: 20 }),
  panels: Type.Array(Panel, { maxItems: 100 }),
};

export const CreateDashboardBody = Type.Object(
  {
    title: editable.title,
    description: Type.Optional(editable.description),
    folderId: Type.Optional(editable.folderId),
    tags: Type.Optional(editable.tags),
    timeRange: Type.Optional(editable.timeRange),
    refresh: Type.Optional(editable.refresh),
    variables: Type.Optional(editable.variables),
    panels: Type.Optional(editable.panels),
  },
  { additionalProperties: false },
);

const BasedOn = Type.Integer({
  minimum: 1,
  description: 'The version this change is based on; 409 when the dashboard has moved on since.',
});

export const ReplaceDashboardBody = Type.Object(
  { ...CreateDashboardBody.properties, version: BasedOn },
  { additionalProperties: false },
);

export const PatchDashboardBody = Type.Object(
  {
    title: Type.Optional(editable.title),
    description: Type.Optional(editable.description),
    folderId: Type.Optional(editable.folderId),
    tags: Type.Optional(editable.tags),
    timeRange: Type.Optional(editable.timeRange),
    refresh: Type.Optional(editable.refresh),
    variables: Type.Optional(editable.variables),
    panels: Type.Optional(editable.panels),
    version: BasedOn,
  },
  { additionalProperties: false },
);

export const CloneDashboardBody = Type.Object(
  {
    title: Type.Optional(editable.title),
    folderId: Type.Optional(editable.folderId),
  },
  { additionalProperties: false },
);

const PanelOut = Type.Object({
  ...Panel.properties,
  id: Type.String(),
  title: Type.String(),
  description: Type.String(),
  queries: Type.Array(PanelQuery),
  options: Panel.properties.options,
  fieldConfig: FieldConfig,
});

export const Dashboard = Type.Object({
  id: Type.String({ format: 'uuid' }),
  title: Type.String(),
  description: Type.String(),
  folderId: Type.Union([Type.String(), Type.Null()]),
  tags: Type.Array(Type.String()),
  timeRange: TimeRange,
  refresh: Type.String(),
  variables: Type.Array(Variable),
  panels: Type.Array(PanelOut),
  version: Type.Integer(),
  createdAt: Timestamp,
  createdBy: Type.Union([Type.String(), Type.Null()]),
  updatedAt: Timestamp,
  updatedBy: Type.Union([Type.String(), Type.Null()]),
});

export const DashboardSummary = Type.Object({
  id: Type.String({ format: 'uuid' }),
  title: Type.String(),
  description: Type.String(),
  folderId: Type.Union([Type.String(), Type.Null()]),
  tags: Type.Array(Type.String()),
  panelCount: Type.Integer(),
  version: Type.Integer(),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});

export const DashboardList = Type.Object({
  data: Type.Array(DashboardSummary),
  pagination: PaginationSchema,
});

export const ListDashboardsQuery = listQuerySchema(['title', 'createdAt', 'updatedAt'] as const, {
  folderId: Type.Optional(
    Type.String({
      maxLength: 36,
      description: 'A folder id, or `root` for dashboards outside any folder.',
    }),
  ),
  tag: Type.Optional(Type.String({ minLength: 1, maxLength: 50 })),
});

export const PanelParams = Type.Object({
  id: Type.String({ format: 'uuid', description: 'Dashboard id.' }),
  panelId: Type.String({ minLength: 1, maxLength: 64, description: 'Panel id.' }),
});

export const AddPanelBody = Type.Object({ version: BasedOn, panel: Panel }, { additionalProperties: false });

export const PatchPanelBody = Type.Object(
  {
    version: BasedOn,
    type: Type.Optional(Panel.properties.type),
    title: Type.Optional(Type.String({ maxLength: 100 })),
    description: Type.Optional(Type.String({ maxLength: 500 })),
    gridPos: Type.Optional(GridPos),
    queries: Panel.properties.queries,
    options: Panel.properties.options,
    fieldConfig: Panel.properties.fieldConfig,
  },
  { additionalProperties: false },
);

export const DeletePanelQuery = Type.Object({ version: BasedOn }, { additionalProperties: false });

export const VariableParams = Type.Object({
  id: Type.String({ format: 'uuid', description: 'Dashboard id.' }),
  name: Type.String({ minLength: 1, maxLength: 32 }),
});

export const VariableValues = Type.Object({
  data: Type.Array(Type.String(), { description: 'The values a variable can take, sorted.' }),
});

export { PanelOut };
