import { Type } from 'typebox';
import { listQuerySchema, PaginationSchema } from '../../../platform/list-query.js';
import { isoTime, Timestamp } from '../../../platform/schemas.js';
import type { ExecutionRow, NodeRunRow } from './executions.repository.js';

const Status = Type.Union([
  Type.Literal('queued'),
  Type.Literal('running'),
  Type.Literal('completed'),
  Type.Literal('completed_with_errors'),
  Type.Literal('failed'),
  Type.Literal('cancelled'),
  Type.Literal('skipped'),
]);
const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(t: T) => Type.Union([t, Type.Null()]);

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
});

export const NodeRun = Type.Object({
  id: Type.String({ format: 'uuid' }),
  nodeId: Type.String(),
  nodeName: Type.String(),
  type: Type.String(),
  runIndex: Type.Integer(),
  status: Type.Union([
    Type.Literal('running'),
    Type.Literal('succeeded'),
    Type.Literal('failed'),
    Type.Literal('skipped'),
  ]),
  port: Nullable(Type.String({ description: 'The output port its result left by.' })),
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
});

export const ListExecutionsQuery = listQuerySchema(['queuedAt', 'finishedAt'] as const, {
  pipelineId: Type.Optional(Type.String({ format: 'uuid' })),
  status: Type.Optional(Status),
});

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
});
