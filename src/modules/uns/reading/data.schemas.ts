import { Type } from 'typebox';
import { CursorPagination } from '../topics/uns-cursor.js';

export const tags = ['UNS data'];

export const Topic = Type.String({ maxLength: 1024, description: 'Topic path.' });

export const Filter = Type.String({
  maxLength: 1024,
  description:
    'MQTT topic filter beginning with the version prefix, e.g. `v1/plant/+/temperature` or `v1/#`.',
});

/** A stored value in its wire form: what latest, history and the live stream answer. */
export const Value = Type.Object({
  topic: Type.String(),
  value: Type.Unknown({ description: 'Number, string, boolean or JSON object.' }),
  timestamp: Type.String({ description: 'Declared timestamp, RFC 3339 with microseconds.' }),
  quality: Type.Integer({ description: 'Stored quality: 0 good, 1 uncertain, 2 bad.' }),
  source: Type.Union([Type.String(), Type.Null()]),
  receivedAt: Type.String({ description: 'When the server received it, RFC 3339 with microseconds.' }),
});

/**
 * `/latest`: with `topic`, `{data: value | null}`; with `filter`, a keyset page. The single shape comes
 * first: it is what the console asks for, and the serializer tries the branches in order.
 */
export const LatestResponse = Type.Union([
  Type.Object({
    data: Type.Union([Value, Type.Null()], {
      description: "With `topic`: the topic's latest value, null when it has none.",
    }),
  }),
  Type.Object({
    data: Type.Array(Value, {
      description: 'With `filter`: latest values of matching topics, in path order.',
    }),
    pagination: CursorPagination,
  }),
]);

export const Bucket = Type.Object({
  start: Type.String({ description: 'Start of the bucket, RFC 3339 with microseconds.' }),
  count: Type.Integer({ description: 'Numeric values in the bucket.' }),
  avg: Type.Number(),
  min: Type.Number(),
  max: Type.Number(),
  first: Type.Number({ description: 'The value with the earliest declared timestamp.' }),
  last: Type.Number({ description: 'The value with the latest declared timestamp.' }),
});

export const AggregateResponse = Type.Object({
  data: Type.Array(Bucket, { description: 'Non-empty buckets, oldest first.' }),
});

export const HistoryResponse = Type.Object({ data: Type.Array(Value), pagination: CursorPagination });
