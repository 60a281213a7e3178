import { Type } from 'typebox';
import { Panel } from '../dashboards/dashboards.schemas.js';

export const DashboardQueryBody = Type.Object(
  {
    from: Type.Optional(
      Type.String({ maxLength: 64, description: "Default: the dashboard's; `now-30d` or RFC 3339." }),
    ),
    to: Type.Optional(Type.String({ maxLength: 64 })),
    variables: Type.Optional(
      Type.Record(
        Type.String(),
        Type.Union([
          Type.String({ maxLength: 200 }),
          Type.Array(Type.String({ maxLength: 200 }), { maxItems: 50 }),
        ]),
        { description: 'Selected values by variable name; a multi-value variable takes a list.' },
      ),
    ),
    widths: Type.Optional(
      Type.Record(Type.String(), Type.Integer(), {
        description: "Each panel's drawn width in pixels, by panel id: at most one point per pixel column.",
      }),
    ),
    panelIds: Type.Optional(Type.Array(Type.String({ maxLength: 64 }), { maxItems: 100 })),
    preview: Type.Optional({
      ...Panel,
      description:
        "The panel editor's preview: a panel not saved yet, checked against the dashboard's variables and answered alone (id `preview` unless it has one).",
    }),
  },
  { additionalProperties: false },
);

const Point = Type.Object({
  t: Type.Number({
    description:
      'Bucket start, epoch milliseconds: a multiple of intervalMs from the epoch (the first bucket may start before from).',
  }),
  count: Type.Integer(),
  avg: Type.Number(),
  min: Type.Number(),
  max: Type.Number(),
  first: Type.Number(),
  last: Type.Number(),
});

const StateChange = Type.Object({
  state: Type.Unknown({ description: 'The value (or field) held.' }),
  from: Type.Number({
    description: 'Epoch milliseconds: the change, or the range start for the value held then.',
  }),
  to: Type.Number({ description: 'Epoch milliseconds: the next change, else the range end (or now).' }),
});

const Series = Type.Object({
  topic: Type.String(),
  field: Type.Union([Type.String(), Type.Null()]),
  label: Type.String(),
  unit: Type.Union([Type.String(), Type.Null()], {
    description: "The panel's unit, else the topic schema's.",
  }),
  min: Type.Union([Type.Number(), Type.Null()]),
  max: Type.Union([Type.Number(), Type.Null()]),
  decimals: Type.Union([Type.Integer(), Type.Null()]),
  latest: Type.Union([
    Type.Object({
      value: Type.Unknown(),
      timestamp: Type.String(),
      quality: Type.Integer(),
      ageMs: Type.Number(),
    }),
    Type.Null(),
  ]),
  quality: Type.Union([Type.Integer(), Type.Null()], {
    description: "The latest value's quality: 0 good, 1 uncertain, 2 bad.",
  }),
  stale: Type.Union([Type.Boolean(), Type.Null()], {
    description: "The latest value is older than the topic schema's stale-after (null: no threshold).",
  }),
  staleAfterMs: Type.Union([Type.Number(), Type.Null()]),
  points: Type.Array(Point, { description: 'Non-empty buckets, oldest first; never more than maxPoints.' }),
  states: Type.Union([Type.Array(StateChange), Type.Null()], {
    description:
      "A state-timeline panel's value changes in the range, oldest first: text, booleans and objects as well as numbers; the first is the value held at `from`. Null for other panels and live queries.",
  }),
  noData: Type.Union(
    [
      Type.Object({
        reason: Type.Union(
          [Type.Literal('no-values'), Type.Literal('no-values-in-range'), Type.Literal('not-numeric')],
          {
            description:
              '`no-values`: the topic has no value at all; `no-values-in-range`: none in the time range; `not-numeric`: a time series of values that are not numbers.',
          },
        ),
        message: Type.String(),
      }),
      Type.Null(),
    ],
    { description: 'Why the series draws nothing; null when it draws something.' },
  ),
  error: Type.Union([Type.String(), Type.Null()]),
});

export const DashboardQueryResponse = Type.Object({
  data: Type.Object({
    from: Type.String(),
    to: Type.String(),
    variables: Type.Record(Type.String(), Type.Array(Type.String())),
    panels: Type.Array(
      Type.Object({
        id: Type.String(),
        type: Type.String(),
        intervalMs: Type.Union([Type.Number(), Type.Null()], { description: 'Bucket width.' }),
        maxPoints: Type.Integer({ description: 'The panel width in pixels the buckets fit.' }),
        series: Type.Array(Series),
      }),
    ),
  }),
});
