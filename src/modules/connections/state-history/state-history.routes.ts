import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { type Static, Type } from 'typebox';
import type { Clock } from '../../../platform/clock.js';
import { badRequest, notFound } from '../../../platform/errors.js';
import { PaginationSchema } from '../../../platform/list-query.js';
import { errorResponse, isoTime, Timestamp } from '../../../platform/schemas.js';
import { summarize } from './health-summary.js';
import type { StateHistoryRepository } from './state-history.repository.js';

const read = { access: { scope: 'connectors:read' } };
const tags = ['State history'];

const StateEvent = Type.Object({
  id: Type.String(),
  connectionId: Type.String({ format: 'uuid' }),
  from: Type.String(),
  to: Type.String(),
  reason: Type.String({
    description:
      'user_start, user_stop, restart, connect_ok, connect_failed, transport_lost, auth_failed, config_error, lease_takeover, shutdown, ...',
  }),
  error: Type.Union([Type.String(), Type.Null()]),
  replica: Type.Union([Type.String(), Type.Null()]),
  at: Timestamp,
});

const HistoryQuery = Type.Object(
  {
    connectionId: Type.Optional(Type.String({ format: 'uuid' })),
    from: Type.Optional(Type.String({ format: 'date-time' })),
    to: Type.Optional(Type.String({ format: 'date-time' })),
    state: Type.Optional(Type.String({ maxLength: 20, description: 'Only transitions into this state.' })),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 500, default: 100 })),
    offset: Type.Optional(Type.Integer({ minimum: 0, maximum: 10_000_000, default: 0 })),
  },
  { additionalProperties: false },
);

type HistoryQuery = Static<typeof HistoryQuery>;

const WINDOWS: Record<string, number> = {
  '1h': 3_600_000,
  '24h': 86_400_000,
  '7d': 7 * 86_400_000,
  '30d': 30 * 86_400_000,
};

const Summary = Type.Object({
  connectionId: Type.String(),
  currentState: Type.String(),
  uptimePct: Type.Union([Type.Number(), Type.Null()], {
    description: 'Up (connected or degraded) out of the time it was meant to run.',
  }),
  connectedSeconds: Type.Integer(),
  stateChanges: Type.Integer(),
  failures: Type.Integer({ description: 'Transitions from up to reconnecting or error.' }),
  errors: Type.Integer(),
  mtbfSeconds: Type.Union([Type.Integer(), Type.Null()], { description: 'Mean time between failures.' }),
  lastError: Type.Union([Type.String(), Type.Null()]),
});

function parseTime(text: string | undefined, field: string): number | undefined {
  if (text === undefined) return undefined;
  const ms = Date.parse(text);
  if (Number.isNaN(ms)) throw badRequest(`query parameter ${field} must be an RFC 3339 time`);
  return ms;
}

/** `/api/v1/connections/state-history`: every state transition, and health summaries over a window. */
export const stateHistoryRoutes: FastifyPluginAsyncTypebox<{
  history: StateHistoryRepository;
  clock: Clock;
  /** Whether the organization has this connection: a history asked of any other id answers 404. */
  hasConnection: (organizationId: string, id: string) => Promise<boolean>;
}> = async (app, { history, clock, hasConnection }) => {
  /** 404 for a connection id the organization does not have (another organization's, or none). */
  const checkConnection = async (organizationId: string, id: string | undefined) => {
    if (id !== undefined && !(await hasConnection(organizationId, id))) throw notFound('connection');
  };

  const listEvents = async (organizationId: string, q: HistoryQuery) => {
    const limit = q.limit ?? 100;
    const offset = q.offset ?? 0;
    const from = parseTime(q.from, 'from');
    const to = parseTime(q.to, 'to');
    await checkConnection(organizationId, q.connectionId);
    const { rows, total } = await history.list(
      organizationId,
      { connectionId: q.connectionId, from, to, state: q.state },
      limit,
      offset,
    );
    return {
      data: rows.map((r) => ({
        id: r.id,
        connectionId: r.connection_id,
        from: r.from_state,
        to: r.to_state,
        reason: r.reason,
        error: r.error,
        replica: r.replica,
        at: isoTime(r.at),
      })),
      pagination: { total, limit, offset },
    };
  };

  app.get(
    '/:id/state-history',
    {
      config: read,
      schema: {
        tags,
        summary: "List one connection's state changes",
        description: 'The same as /state-history?connectionId={id}.',
        params: Type.Object({ id: Type.String({ format: 'uuid' }) }),
        querystring: Type.Omit(HistoryQuery, ['connectionId']),
        response: {
          200: Type.Object({ data: Type.Array(StateEvent), pagination: PaginationSchema }),
          404: errorResponse('No connection with this id in the organization.'),
        },
      },
    },
    async (request) =>
      listEvents(request.organization!.id, { ...request.query, connectionId: request.params.id }),
  );

  app.get(
    '/state-history',
    {
      config: read,
      schema: {
        tags,
        summary: 'List connection state changes',
        description:
          "Newest first; filter by connection, time range [from, to) and target state. A `connectionId` the organization does not have (another organization's, or none) answers 404.",
        querystring: HistoryQuery,
        response: {
          200: Type.Object({ data: Type.Array(StateEvent), pagination: PaginationSchema }),
          404: errorResponse('No connection with this id in the organization.'),
        },
      },
    },
    async (request) => listEvents(request.organization!.id, request.query),
  );

  app.get(
    '/state-history/summary',
    {
      config: read,
      schema: {
        tags,
        summary: 'Health summary per connection',
        description:
          'Over the window ending now: uptime share, state changes, failures, errors, mean time between failures; plus totals. A `connectionId` the organization does not have answers 404.',
        querystring: Type.Object(
          {
            window: Type.Optional(
              Type.Union(
                Object.keys(WINDOWS).map((w) => Type.Literal(w)),
                { default: '24h' },
              ),
            ),
            connectionId: Type.Optional(Type.String({ format: 'uuid' })),
          },
          { additionalProperties: false },
        ),
        response: {
          200: Type.Object({
            data: Type.Object({
              window: Type.String(),
              from: Timestamp,
              to: Timestamp,
              totals: Type.Object({
                connections: Type.Integer(),
                connected: Type.Integer(),
                failures: Type.Integer(),
                stateChanges: Type.Integer(),
              }),
              connections: Type.Array(Summary),
            }),
          }),
          404: errorResponse('No connection with this id in the organization.'),
        },
      },
    },
    async (request) => {
      const window = request.query.window ?? '24h';
      await checkConnection(request.organization!.id, request.query.connectionId);
      const to = clock.now();
      const from = to - WINDOWS[window]!;
      const { events, before } = await history.window(
        request.organization!.id,
        from,
        to,
        request.query.connectionId,
      );
      const ids = new Set([...events.map((e) => e.connection_id), ...before.map((b) => b.connection_id)]);
      const connections = [...ids].map((id) =>
        summarize(
          id,
          before.find((b) => b.connection_id === id),
          events.filter((e) => e.connection_id === id),
          from,
          to,
        ),
      );
      return {
        data: {
          window,
          from: isoTime(from),
          to: isoTime(to),
          totals: {
            connections: connections.length,
            connected: connections.filter(
              (c) => c.currentState === 'connected' || c.currentState === 'degraded',
            ).length,
            failures: connections.reduce((n, c) => n + c.failures, 0),
            stateChanges: connections.reduce((n, c) => n + c.stateChanges, 0),
          },
          connections,
        },
      };
    },
  );
};
