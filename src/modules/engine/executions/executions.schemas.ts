import { Type } from 'typebox';
import { listQuerySchema, PaginationSchema } from '../../../platform/list-query.js';
import { isoTime, Timestamp } from '../../../platform/schemas.js';
import type { ExecutionRow, NodeRunRow } from '../queue/executions.repository.js';

const Status = Type.Union([
  Type.Literal('queued'),
  Type.Literal('running'),
  Type.Literal('waiting'),
  Type.Literal('completed'),
  Type.Literal('completed_with_errors'),
  Type.Literal('failed'),
  Type.Literal('cancelled'),
  Type.Literal('skipped'),
]);
const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(
  t: T,
  options?: { description: string },
) => Type.Union([t, Type.Null()], options);

export const Execution = Type.Object({
  id: Type.String({ format: 'uuid' }),
  pipelineId: Type.String({ format: 'uuid' }),
  pipelineVersion: Type.Integer({ description: 'The version it runs; never changes.' }),
  status: Status,
  reason: Nullable(Type.String()),
  trigger: Type.Object({
    type: Type.String(),
    nodeId: Type.String(),
    firedAt: Timestamp,
    source: Type.Record(Type.String(), Type.Unknown()),
  }),
  input: Type.Unknown(),
  error: Nullable(
    Type.Object({
      nodeId: Nullable(Type.String()),
      nodeName: Nullable(Type.String()),
      code: Type.String(),
      message: Type.String(),
    }),
  ),
  retryOf: Type.Union([Type.String({ format: 'uuid' }), Type.Null()], {
    description: 'The execution this one retries.',
  }),
  claims: Type.Integer({ description: 'Times a replica claimed it; above 1: resumed after a lost lease.' }),
  queuedAt: Timestamp,
  startedAt: Nullable(Timestamp),
  finishedAt: Nullable(Timestamp),
  durationMs: Nullable(Type.Integer()),
  resumeAt: Nullable(Timestamp, {
    description: 'For a waiting execution (parked by a long wait): when it resumes.',
  }),
});

export const NodeRun = Type.Object({
  id: Type.String({ format: 'uuid' }),
  nodeId: Type.String(),
  nodeName: Type.String(),
  type: Type.String(),
  runIndex: Type.Integer(),
  status: Type.Union([
    Type.Literal('running'),
    Type.Literal('waiting'),
    Type.Literal('succeeded'),
    Type.Literal('failed'),
    Type.Literal('skipped'),
  ]),
  port: Nullable(
    Type.String({ description: 'The output port its result left by (several: comma-separated).' }),
  ),
  attempts: Type.Array(
    Type.Object({
      n: Type.Integer(),
      startedAt: Timestamp,
      durationMs: Type.Integer(),
      error: Nullable(Type.String()),
    }),
  ),
  input: Type.Unknown({ description: 'Stored with history detail `full`, and always for a failed run.' }),
  output: Type.Unknown({ description: 'Stored with history detail `full`.' }),
  error: Nullable(Type.Object({ code: Type.String(), message: Type.String() })),
  startedAt: Timestamp,
  finishedAt: Nullable(Timestamp),
  durationMs: Nullable(Type.Integer()),
  iteration: Nullable(Type.Integer({ description: 'The for-each iteration (index) it ran in.' })),
  iterationKey: Nullable(
    Type.String({ description: 'The indices of every enclosing for-each, outermost first, such as `3.0`.' }),
  ),
});

const ExecutionFilters = {
  pipelineId: Type.Optional(Type.String({ format: 'uuid' })),
  status: Type.Optional(Status),
  trigger: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 64,
      pattern: '^[a-z][a-z0-9._-]*$',
      description: 'The trigger type: `manual`, `schedule`, `retry`, ...',
    }),
  ),
  from: Type.Optional(Type.String({ format: 'date-time', description: 'Queued at or after.' })),
  to: Type.Optional(Type.String({ format: 'date-time', description: 'Queued before.' })),
};

export const ListExecutionsQuery = listQuerySchema(['queuedAt', 'finishedAt'] as const, ExecutionFilters);

export const StatsQuery = Type.Object(
  {
    pipelineId: ExecutionFilters.pipelineId,
    trigger: ExecutionFilters.trigger,
    from: ExecutionFilters.from,
    to: ExecutionFilters.to,
  },
  { additionalProperties: false },
);

export const ExecutionStats = Type.Object({
  total: Type.Integer(),
  byStatus: Type.Record(Type.String(), Type.Integer()),
  successRate: Nullable(
    Type.Number({
      description: 'completed / (completed + completed_with_errors + failed); null when none ran.',
    }),
  ),
  durationMs: Type.Object({ average: Nullable(Type.Integer()), max: Nullable(Type.Integer()) }),
});

export const NodeRunsQuery = Type.Object(
  {
    nodeId: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 500, default: 50 })),
    offset: Type.Optional(Type.Integer({ minimum: 0, maximum: 10_000_000, default: 0 })),
  },
  { additionalProperties: false },
);

export const IterationsQuery = Type.Object(
  {
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 500, default: 50 })),
    offset: Type.Optional(Type.Integer({ minimum: 0, maximum: 10_000_000, default: 0 })),
  },
  { additionalProperties: false },
);

export const NodeRunList = Type.Object({ data: Type.Array(NodeRun), pagination: PaginationSchema });

export const ExecutionList = Type.Object({ data: Type.Array(Execution), pagination: PaginationSchema });

export const toExecution = (e: ExecutionRow) => ({
  id: e.id,
  pipelineId: e.pipelineId,
  pipelineVersion: e.pipelineVersion,
  status: e.status,
  reason: e.reason,
  trigger: { ...e.trigger, firedAt: isoTime(e.trigger.firedAt) },
  input: e.input,
  error: e.error,
  retryOf: e.retryOf,
  claims: e.claims,
  queuedAt: isoTime(e.queuedAt),
  startedAt: isoTime(e.startedAt),
  finishedAt: isoTime(e.finishedAt),
  durationMs: e.startedAt !== null && e.finishedAt !== null ? e.finishedAt - e.startedAt : null,
  resumeAt: e.status === 'waiting' ? isoTime(e.runAt) : null,
});

export const toNodeRun = (r: NodeRunRow) => ({
  id: r.id,
  nodeId: r.nodeId,
  nodeName: r.nodeName,
  type: r.type,
  runIndex: r.runIndex,
  status: r.status,
  port: r.port,
  attempts: r.attempts.map((a) => ({ ...a, startedAt: isoTime(a.startedAt) })),
  input: r.input,
  output: r.output,
  error: r.error,
  startedAt: isoTime(r.startedAt),
  finishedAt: isoTime(r.finishedAt),
  durationMs: r.durationMs,
  iteration: r.iteration,
  iterationKey: r.iterationKey,
});
