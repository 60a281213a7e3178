import type { FastifyInstance } from 'fastify';
import type { Kysely } from 'kysely';
import { ApiError } from '../../../platform/errors.js';
import type { Database } from '../../../storage/tables.js';
import type { FunctionDirection } from '../../connections/drivers/driver.js';
import type { ExecutionResult } from '../../connections/functions/functions.service.js';
import { functionTypeOf } from '../../connections/functions/functions.service.js';
import { type BucketRow, DataRepository } from '../../uns/reading/data.repository.js';
import { type LatestValue, toLatestValue } from '../../uns/reading/uns-values.js';
import { formatRfc3339Micros } from '../../uns/rfc3339.js';
import type { ModelsService } from '../models/models.service.js';
import type { PipelinesRepository } from '../pipelines/pipelines.repository.js';
import type { ExecutionsRepository } from '../queue/executions.repository.js';
import { NodeStateRepository, type NodeStateStore } from './node-state.repository.js';
import { NodeError } from './node-types.js';
import { type PipelineRunRequest, type PipelineRunResult, runPipeline } from './pipeline-runs.js';

/** What data and integration nodes reach beyond the execution: storage and the other modules. */
export interface NodeServices {
  now(): number;
  /** State of buffer, deadband and on-change nodes. */
  state: NodeStateStore;
  /**
   * Runs a saved connection function through the connections module's execute path (its read-only and
   * confirmWrites rules). `beforeWrite` runs after the checks and before a write reaches the device.
   */
  callFunction(
    organizationId: string,
    call: {
      connectionId: string;
      functionId: string;
      parameters: Record<string, unknown>;
      confirmWrites: boolean;
    },
    beforeWrite: () => Promise<void>,
  ): Promise<{ direction: FunctionDirection; result: ExecutionResult }>;
  /** The direction of a saved connection function. */
  functionDirection(
    organizationId: string,
    connectionId: string,
    functionId: string,
  ): Promise<FunctionDirection>;
  latest(organizationId: string, topic: string): Promise<LatestValue | null>;
  history(
    organizationId: string,
    topic: string,
    range: { fromUs: number; toUs: number; limit: number; order: 'asc' | 'desc' },
  ): Promise<{ topic: string; values: LatestValue[]; more: boolean }>;
  aggregate(
    organizationId: string,
    topic: string,
    range: { fromUs: number; toUs: number; widthUs: number },
  ): Promise<{ topic: string; buckets: (Omit<BucketRow, 'bucketStartUs'> & { start: string })[] }>;
  validateModel(
    organizationId: string,
    modelId: string,
    value: unknown,
  ): Promise<{ valid: boolean; errors: { path: string; message: string }[] }>;
  /** The top-level field names of a model's current version. */
  modelFields(organizationId: string, modelId: string): Promise<string[]>;
  runPipeline(organizationId: string, request: PipelineRunRequest): Promise<PipelineRunResult>;
}

/** An API error of another module as a node error (its message names what is wrong). */
export function asNodeError(error: unknown): unknown {
  if (!(error instanceof ApiError)) return error;
  const code =
    error.statusCode === 404 ? 'not_found' : error.statusCode === 409 ? 'refused' : 'bad_parameter';
  return new NodeError(code, error.message);
}

async function translated<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    throw asNodeError(error);
  }
}

/**
 * The services of this app for its nodes. The connections module is installed after the engine, so it
 * is looked up when a node runs.
 */
export function createNodeServices(
  app: FastifyInstance,
  deps: {
    db: Kysely<Database>;
    now: () => number;
    models: ModelsService;
    pipelines: PipelinesRepository;
    executions: ExecutionsRepository;
    onQueued: () => void;
  },
): NodeServices {
  const data = new DataRepository(deps.db, () => app.uns.writer.settle());
  const topicOf = async (organizationId: string, topic: string) => {
    const path = app.uns.topics.parseNodePath(topic, 'topic');
    return { path, id: await app.uns.topics.resolve(organizationId, path) };
  };
  return {
    now: deps.now,
    state: new NodeStateRepository(deps.db, deps.now),
    callFunction: (organizationId, call, beforeWrite) =>
      translated(async () => {
        const functions = app.connectors.functions;
        const { connection, row } = await functions.get(organizationId, call.connectionId, call.functionId);
        const direction = functionTypeOf(connection.protocol, row.type).type.direction;
        if (direction === 'write') {
          if (connection.read_only === 1)
            throw new NodeError(
              'write_refused',
              'the connection is read-only; its write functions are refused',
            );
          if (!call.confirmWrites)
            throw new NodeError(
              'write_refused',
              'this function writes to the device: set confirmWrites: true in the node parameters',
            );
          await beforeWrite();
        }
        const result = await functions.execute(organizationId, call.connectionId, call.functionId, {
          parameters: call.parameters,
          confirmWrites: call.confirmWrites,
        });
        return { direction, result };
      }),
    functionDirection: (organizationId, connectionId, functionId) =>
      translated(async () => {
        const { connection, row } = await app.connectors.functions.get(
          organizationId,
          connectionId,
          functionId,
        );
        return functionTypeOf(connection.protocol, row.type).type.direction;
      }),
    latest: (organizationId, topic) =>
      translated(async () => {
        const { path, id } = await topicOf(organizationId, topic);
        const row = await data.latestOf(id);
        return row ? toLatestValue(path, row) : null;
      }),
    history: (organizationId, topic, range) =>
      translated(async () => {
        const { path, id } = await topicOf(organizationId, topic);
        const rows = await data.range({ topicId: id, ...range, afterUs: null });
        return {
          topic: path,
          values: rows.slice(0, range.limit).map((row) => toLatestValue(path, row)),
          more: rows.length > range.limit,
        };
      }),
    aggregate: (organizationId, topic, range) =>
      translated(async () => {
        const { path, id } = await topicOf(organizationId, topic);
        const rows = await data.buckets(id, range.fromUs, range.toUs, range.widthUs);
        return {
          topic: path,
          buckets: rows.map(({ bucketStartUs, ...rest }) => ({
            start: formatRfc3339Micros(bucketStartUs),
            ...rest,
          })),
        };
      }),
    validateModel: (organizationId, modelId, value) =>
      translated(() => deps.models.validate(organizationId, modelId, value)),
    modelFields: (organizationId, modelId) =>
      translated(async () => (await deps.models.get(organizationId, modelId)).fields.map((f) => f.name)),
    runPipeline: (organizationId, request) =>
      translated(() =>
        runPipeline(
          {
            db: deps.db,
            pipelines: deps.pipelines,
            executions: deps.executions,
            now: deps.now,
            onQueued: deps.onQueued,
          },
          organizationId,
          request,
        ),
      ),
  };
}
