import type { FastifyInstance } from 'fastify';
import type { Registry } from 'prom-client';
import type { Config } from '../../config/config.schema.js';
import type { Clock } from '../../platform/clock.js';
import type { EntityEvents } from '../../platform/entity-events.js';
import type { InvalidationBus } from '../../platform/invalidation-bus.js';
import { resolveKeyEncryptionKey } from '../../platform/secrets/key-encryption-key.js';
import type { Storage } from '../../storage/database.js';
import { parsePublishRecord } from '../uns/publishing/publish-record.js';
import { UnsInputError } from '../uns/uns-errors.js';
import type { EntityVersionsRepository } from '../versions/entity-versions.repository.js';
import type { EdgeWriter } from '../versions/versioned-rows.js';
import { executionsRoutes } from './executions/executions.routes.js';
import { ExecutionsService } from './executions/executions.service.js';
import { ModelsRepository } from './models/models.repository.js';
import { modelsRoutes } from './models/models.routes.js';
import { ModelsService } from './models/models.service.js';
import { createNodeServices } from './nodes/node-services.js';
import { NodeError } from './nodes/node-types.js';
import { nodesRoutes } from './nodes/nodes.routes.js';
import { PipelineNodesService } from './pipelines/pipeline-nodes.service.js';
import { PipelinesRepository } from './pipelines/pipelines.repository.js';
import { pipelinesRoutes } from './pipelines/pipelines.routes.js';
import { PipelinesService } from './pipelines/pipelines.service.js';
import { ExecutionsRepository } from './queue/executions.repository.js';
import { SqliteEngineThread } from './queue/sqlite-engine-thread.js';
import { ExecutionEngine } from './runtime/engine.js';
import { registerEngineMetrics } from './runtime/engine-metrics.js';
import { Sandbox } from './sandbox/sandbox.js';
import { registerSandboxMetrics } from './sandbox/sandbox-metrics.js';
import { ScheduleTriggers } from './triggers/schedule-triggers.js';
import { installTriggers } from './triggers/triggers.module.js';

declare module 'fastify' {
  interface FastifyInstance {
    engine: ExecutionEngine;
  }
}

/**
 * Installs the engine under `/api/v1/engine`: data models, pipelines, node types and executions, with
 * this replica's execution engine (started when the app is ready, stopped when it closes) and its
 * sandbox thread.
 */
export async function installEngine(
  app: FastifyInstance,
  deps: {
    config: Config;
    storage: Storage;
    clock: Clock;
    /** Model and pipeline changes: announced by their services; pipelines' applied by the triggers and schedules. */
    events: EntityEvents;
    /** Model bindings changed: the UNS re-reads them (on every replica). */
    bus: InvalidationBus;
    versions: EntityVersionsRepository;
    /** The dependency graph's edges, rewritten on every save. */
    edges: EdgeWriter;
    /** The app's Prometheus registry: the engine's counts are read from it (registerEngineMetrics). */
    metrics?: Registry;
  },
): Promise<ExecutionEngine> {
  const { storage, clock, config } = deps;
  const db = storage.db;
  const models = new ModelsService({
    db,
    repo: new ModelsRepository(db),
    versions: deps.versions,
    edges: deps.edges,
    bus: deps.bus,
    clock,
    topicPrefix: config.topicPrefix,
    events: deps.events,
  });
  await app.register(modelsRoutes, { prefix: '/api/v1/engine/models', versions: deps.versions, models });
  // On a SQLite file the engine's bookkeeping turns run on a thread (an in-memory database cannot be shared).
  const turns =
    storage.dialect === 'sqlite' && storage.location !== ':memory:'
      ? new SqliteEngineThread(storage.location)
      : undefined;
  const executions = new ExecutionsRepository(db, storage.durableWrite, turns);
  const sandbox = new Sandbox();
  const publish = async (organizationId: string, topic: string, value: unknown, quality?: number) => {
    try {
      const record = parsePublishRecord(
        quality === undefined ? { topic, value } : { topic, value, quality },
        { prefix: config.topicPrefix, now: () => clock.now() },
      );
      await app.uns.publisher.publish(organizationId, [record], { batch: false, fanout: true });
    } catch (error) {
      if (error instanceof UnsInputError)
        throw new NodeError('publish_refused', `the UNS refused the value: ${error.field}: ${error.message}`);
      throw error;
    }
  };
  let triggers: Awaited<ReturnType<typeof installTriggers>> | undefined;
  const pipelinesRepo = new PipelinesRepository(db);
  const services = createNodeServices(app, {
    db,
    now: () => clock.now(),
    models,
    pipelines: pipelinesRepo,
    executions,
    onQueued: () => engine.wake(),
  });
  const engine = new ExecutionEngine({
    repo: executions,
    sandbox,
    clock,
    log: app.log,
    publish,
    services,
    concurrency: config.engineConcurrency,
    onFinished: (execution, status, error) => triggers?.pipelineTriggers.finished(execution, status, error),
  });
  app.decorate('engine', engine);
  if (deps.metrics) {
    registerEngineMetrics(deps.metrics, engine);
    registerSandboxMetrics(deps.metrics, sandbox);
  }
  // Maintenance mode: triggers and manual runs are recorded as skipped with the reason (organizations/maintenance).
  const skipReason = async (organizationId: string) =>
    app.hasDecorator('maintenance') ? app.maintenance.skipReason(organizationId) : null;
  const pipelines = new PipelinesService({
    db,
    repo: pipelinesRepo,
    versions: deps.versions,
    edges: deps.edges,
    executions,
    clock,
    onQueued: () => engine.wake(),
    events: deps.events,
    skipReason,
  });
  await app.register(pipelinesRoutes, {
    prefix: '/api/v1/engine/pipelines',
    pipelines,
    versions: deps.versions,
    nodeOps: { nodes: new PipelineNodesService(pipelines), sandbox, publish, services },
  });
  await app.register(nodesRoutes, { prefix: '/api/v1/engine/nodes', sandbox, publish, services });
  await app.register(executionsRoutes, {
    prefix: '/api/v1/engine/executions',
    executions,
    service: new ExecutionsService({
      repo: executions,
      pipelines: pipelinesRepo,
      clock,
      onQueued: () => engine.wake(),
      services,
    }),
  });
  triggers = await installTriggers(app, {
    db,
    executions,
    pipelines: pipelinesRepo,
    clock,
    events: deps.events,
    topicPrefix: config.topicPrefix,
    onQueued: () => engine.wake(),
    enqueue: (inputs) => engine.enqueue(inputs),
    webhooks: {
      keyEncryptionKey: resolveKeyEncryptionKey(config),
      maxFailures: config.webhookMaxFailures,
      windowSeconds: config.webhookWindow,
      toleranceSeconds: config.webhookSignatureTolerance,
    },
  });
  const schedules = new ScheduleTriggers({
    db,
    executions,
    clock,
    log: app.log,
    onQueued: () => engine.wake(),
    skipReason,
  });
  const stopSchedules = deps.events.on('pipeline', () => schedules.refresh());
  // Retention per organization: on start and hourly.
  const purge = () =>
    void executions
      .purge(clock.now())
      .catch((error) => app.log.warn({ err: error }, 'execution retention failed'));
  let retention: NodeJS.Timeout | undefined;
  app.addHook('onReady', async () => {
    engine.start();
    schedules.start();
    purge();
    retention = setInterval(purge, 3_600_000);
    retention.unref();
  });
  app.addHook('onClose', async () => {
    if (retention) clearInterval(retention);
    stopSchedules();
    schedules.stop();
    await engine.stop();
    await sandbox.close();
    await turns?.close();
  });
  return engine;
}
