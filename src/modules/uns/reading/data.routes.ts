import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { Kysely } from 'kysely';
import { Type } from 'typebox';
import type { Clock } from '../../../platform/clock.js';
import { badRequest } from '../../../platform/errors.js';
import type { Database } from '../../../storage/tables.js';
import { asBadRequest } from '../publishing/publish.routes.js';
import { formatRfc3339Micros, MAX_TIMESTAMP_US, MIN_TIMESTAMP_US, parseRfc3339Micros } from '../rfc3339.js';
import type { TopicsService } from '../topics/topics.service.js';
import { CursorQuery, decodeCursor, encodeCursor, prefixUpperBound } from '../topics/uns-cursor.js';
import { DataRepository } from './data.repository.js';
import { AggregateResponse, Filter, HistoryResponse, LatestResponse, Topic, tags } from './data.schemas.js';
import { toLatestValue } from './uns-values.js';

const Time = (what: string) =>
  Type.Optional(Type.String({ maxLength: 64, description: `${what}, RFC 3339.` }));

const RangeQuerystring = Type.Object(
  {
    topic: Topic,
    from: Time('Inclusive start (default: the earliest)'),
    to: Time('Exclusive end (default: the latest)'),
    order: Type.Optional(Type.Union([Type.Literal('asc'), Type.Literal('desc')], { default: 'asc' })),
    ...CursorQuery,
  },
  { additionalProperties: false },
);

const DURATION = /^(\d{1,9})(ms|s|m|h|d)$/;
const UNIT_US: Record<string, number> = { ms: 1e3, s: 1e6, m: 6e7, h: 3.6e9, d: 8.64e10 };
const MAX_BUCKETS = 1_000_000;
const MAX_EXPORT_ROWS = 1_000_000;

function timeBounds(from: string | undefined, to: string | undefined) {
  const fromUs = from === undefined ? MIN_TIMESTAMP_US : asBadRequest(() => parseRfc3339Micros(from, 'from'));
  const toUs = to === undefined ? MAX_TIMESTAMP_US : asBadRequest(() => parseRfc3339Micros(to, 'to'));
  if (toUs <= fromUs) throw badRequest('to must be later than from');
  return { fromUs, toUs };
}

/** A cell a spreadsheet would run as a formula (OWASP CSV injection): it starts with one of these. */
const FORMULA_START = /^[=+\-@\t\r]/;
/** A JSON number (the value column): `-5` is data, not a formula, and stays as it is. */
const JSON_NUMBER = /^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?$/;

/**
 * One CSV field (RFC 4180): quoted when it holds a quote, comma or line break, quotes doubled. A cell
 * starting with `=`, `+`, `-`, `@`, tab or CR (OWASP CSV injection) is prefixed with `'` and quoted,
 * unless it is a JSON number, so that a spreadsheet shows it as text instead of running it.
 */
export function csvField(text: string): string {
  const cell = FORMULA_START.test(text) && !JSON_NUMBER.test(text) ? `'${text}` : text;
  return cell !== text || /[",\r\n]/.test(cell) ? `"${cell.replace(/"/g, '""')}"` : cell;
}

/** `/api/v1/uns/data`: latest values, time ranges, time buckets and CSV export. */
export const dataRoutes: FastifyPluginAsyncTypebox<{
  db: Kysely<Database>;
  topics: TopicsService;
  clock: Clock;
  /** Resolves once every committed value can be read (HistorianWrites.settle). */
  settle: () => Promise<void>;
}> = async (app, { db, topics, settle }) => {
  const data = new DataRepository(db, settle);
  const read = { access: { scope: 'uns:read' } };

  app.get(
    '/latest',
    {
      config: read,
      schema: {
        tags,
        summary: 'Latest values',
        description:
          "With `topic`: that topic's latest value (data null when it has none; 404 when the topic does not exist). With `filter`: the latest value of every matching topic, in path order, keyset paged.",
        querystring: Type.Object(
          {
            topic: Type.Optional(Topic),
            filter: Type.Optional(Filter),
            ...CursorQuery,
          },
          { additionalProperties: false },
        ),
        response: { 200: LatestResponse },
      },
    },
    async (request) => {
      const organizationId = request.organization!.id;
      const { topic, filter } = request.query;
      if (topic !== undefined) {
        const path = topics.parseNodePath(topic);
        const row = await data.latestOf(await topics.resolve(organizationId, path));
        return { data: row ? toLatestValue(path, row) : null };
      }
      if (filter === undefined) throw badRequest('query parameter topic or filter is required');
      const matcher = topics.parseFilter(filter);
      const limit = request.query.limit ?? 100;
      let after = decodeCursor<string>(request.query.cursor, 'string');
      const bounds = {
        exact: matcher.exactPath,
        from: matcher.literalPrefix,
        to: prefixUpperBound(matcher.literalPrefix),
      };
      const items: ReturnType<typeof toLatestValue>[] = [];
      // Rows in the prefix's range that a `+` filter skips are read past; `v1/a/#` skips none.
      const chunk = matcher.hasWildcards && !matcher.coversPrefix ? Math.max(limit * 4, 500) : limit + 1;
      for (;;) {
        const rows = await data.latestInRange(organizationId, bounds, after, chunk);
        for (const row of rows) {
          after = row.path;
          if (matcher.matches(row.path)) items.push(toLatestValue(row.path, row));
          if (items.length > limit) break;
        }
        if (items.length > limit || rows.length < chunk) break;
      }
      const more = items.length > limit;
      if (more) items.length = limit;
      return {
        data: items,
        pagination: { limit, nextCursor: more ? encodeCursor(items[items.length - 1]!.topic) : null },
      };
    },
  );

  app.get(
    '/history',
    {
      config: read,
      schema: {
        tags,
        summary: 'Values of a topic in a time range',
        description:
          'By declared timestamp, oldest first (order=asc) or newest first (order=desc); keyset paged.',
        querystring: RangeQuerystring,
        response: { 200: HistoryResponse },
      },
    },
    async (request) => {
      const organizationId = request.organization!.id;
      const q = request.query;
      const path = topics.parseNodePath(q.topic);
      const topicId = await topics.resolve(organizationId, path);
      const { fromUs, toUs } = timeBounds(q.from, q.to);
      const limit = q.limit ?? 100;
      const order = q.order ?? 'asc';
      const afterUs = decodeCursor<number>(q.cursor, 'number');
      const rows = await data.range({ topicId, fromUs, toUs, order, limit, afterUs });
      const more = rows.length > limit;
      const page = rows.slice(0, limit).map((row) => toLatestValue(path, row));
      const last = rows[limit - 1];
      return {
        data: page,
        pagination: { limit, nextCursor: more && last ? encodeCursor(Number(last.ts_us)) : null },
      };
    },
  );

  app.get(
    '/aggregate',
    {
      config: read,
      schema: {
        tags,
        summary: 'Numeric values of a topic in time buckets',
        description:
          'Buckets of `interval` (e.g. 500ms, 10s, 5m, 1h, 1d) from `from`: count, avg, min, max, first and last by declared time. Non-numeric values are left out; empty buckets are not returned.',
        querystring: Type.Object(
          {
            topic: Topic,
            from: Type.String({ maxLength: 64 }),
            to: Type.String({ maxLength: 64 }),
            interval: Type.String({ maxLength: 16 }),
          },
          { additionalProperties: false },
        ),
        response: { 200: AggregateResponse },
      },
    },
    async (request) => {
      const organizationId = request.organization!.id;
      const q = request.query;
      const path = topics.parseNodePath(q.topic);
      const { fromUs, toUs } = timeBounds(q.from, q.to);
      const match = DURATION.exec(q.interval);
      const widthUs = match ? Number(match[1]) * UNIT_US[match[2]!]! : 0;
      if (widthUs <= 0)
        throw badRequest('query parameter interval must be a duration such as 500ms, 10s, 5m, 1h or 1d');
      if ((toUs - fromUs) / widthUs > MAX_BUCKETS) {
        throw badRequest(`query parameter interval is too small: at most ${MAX_BUCKETS} buckets per query`);
      }
      const topicId = await topics.resolve(organizationId, path);
      const rows = await data.buckets(topicId, fromUs, toUs, widthUs);
      return {
        data: rows.map(({ bucketStartUs, ...rest }) => ({
          start: formatRfc3339Micros(bucketStartUs),
          ...rest,
        })),
      };
    },
  );

  app.get(
    '/export',
    {
      config: read,
      schema: {
        tags,
        summary: 'CSV export of a time range',
        description:
          'text/csv: timestamp, value (JSON), quality, source, receivedAt; at most 1,000,000 rows.',
        querystring: Type.Object(
          {
            topic: Topic,
            from: Time('Inclusive start'),
            to: Time('Exclusive end'),
            order: Type.Optional(Type.Union([Type.Literal('asc'), Type.Literal('desc')])),
          },
          { additionalProperties: false },
        ),
      },
    },
    async (request, reply) => {
      const organizationId = request.organization!.id;
      const q = request.query;
      const path = topics.parseNodePath(q.topic);
      const topicId = await topics.resolve(organizationId, path);
      const { fromUs, toUs } = timeBounds(q.from, q.to);
      const order = q.order ?? 'asc';
      const lines = ['timestamp,value,quality,source,receivedAt'];
      let afterUs: number | null = null;
      for (let total = 0; total < MAX_EXPORT_ROWS; ) {
        const rows = await data.range({ topicId, fromUs, toUs, order, limit: 5000, afterUs });
        for (const row of rows.slice(0, 5000)) {
          lines.push(
            [
              formatRfc3339Micros(Number(row.ts_us)),
              csvField(row.value_json),
              String(row.quality),
              csvField(row.source ?? ''),
              formatRfc3339Micros(Number(row.received_us)),
            ].join(','),
          );
        }
        total += Math.min(rows.length, 5000);
        if (rows.length <= 5000) break;
        afterUs = Number(rows[4999]!.ts_us);
      }
      const name = path.replace(/[^A-Za-z0-9._-]+/g, '_').slice(0, 100);
      reply.header('content-type', 'text/csv; charset=utf-8');
      reply.header('content-disposition', `attachment; filename="${name}.csv"`);
      return `${lines.join('\r\n')}\r\n`;
    },
  );
};
