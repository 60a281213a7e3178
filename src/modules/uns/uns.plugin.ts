import type { FastifyInstance } from 'fastify';
import type { Config } from '../../config/config.schema.js';
import type { AccessDirectory, BearerVerifier } from '../../platform/access-control.js';
import type { Clock } from '../../platform/clock.js';
import type { Storage } from '../../storage/database.js';
import { BindingResolver } from './binding-resolver.js';
import { brokerRoutes, unsSettingsRoutes } from './broker.routes.js';
import { dataRoutes } from './data.routes.js';
import { GroupCommitter } from './historian/group-commit.js';
import { type HistorianLayout, openHistorian } from './historian/historian-layout.js';
import { type CommitJob, HistorianWriter } from './historian/historian-writer.js';
import { BrokerManager } from './mqtt/broker-manager.js';
import { createTokenAuthenticator, type TokenAuthenticator } from './mqtt/mqtt-auth.js';
import { publishRoutes } from './publish.routes.js';
import { PublishService } from './publish.service.js';
import { schemasRoutes } from './schemas.routes.js';
import { SchemasService } from './schemas.service.js';
import { topicsRoutes } from './topics.routes.js';
import { TopicsService } from './topics.service.js';
import { UnsSettingsService } from './uns-settings.service.js';

/** The unified namespace of one app instance: its services, its broker and its historian. */
export interface UnsRuntime {
  layout: HistorianLayout;
  writer: HistorianWriter;
  committer: GroupCommitter<CommitJob>;
  bindings: BindingResolver;
  publisher: PublishService;
  broker: BrokerManager;
  settings: UnsSettingsService;
  topics: TopicsService;
  schemas: SchemasService;
  /** MQTT's authentication: the same verifiers and rules as HTTP bearer tokens. */
  authenticateToken: TokenAuthenticator;
  /** The live verifier list the access control uses (tests add a test verifier to it). */
  bearerVerifiers: BearerVerifier[];
  /** Applies the retention setting now (also runs hourly). */
  applyRetention(): Promise<string>;
}

declare module 'fastify' {
  interface FastifyInstance {
    uns: UnsRuntime;
  }
}

export interface UnsDeps {
  config: Config;
  storage: Storage;
  clock: Clock;
  directory: AccessDirectory;
  bearerVerifiers: BearerVerifier[];
  /** The /readyz checks; `broker` is present while a broker is configured. */
  readiness: Record<string, () => Promise<void>>;
}

const HOUR_MS = 3_600_000;

/**
 * Installs the unified namespace: historian, group commit, schema bindings, routes under
 * `/api/v1/uns` and `/api/v1/system/uns/settings`, and the MQTT broker, which starts when the app is
 * ready (a taken port fails start-up naming MERIDIAN_MQTT_PORT) and stops when it closes, after the
 * pending commits.
 */
export async function installUns(app: FastifyInstance, deps: UnsDeps): Promise<UnsRuntime> {
  const { config, storage, clock } = deps;
  const db = storage.db;
  const layout = await openHistorian(storage);
  const writer = new HistorianWriter(db, storage.dialect, layout);
  const committer = new GroupCommitter<CommitJob>((jobs) => writer.write(jobs), {
    windowMs: config.unsCommitWindow,
    maxRecords: config.unsCommitMaxRecords,
    concurrency: storage.dialect === 'sqlite' ? 1 : Math.max(1, Math.min(4, config.databasePoolSize - 2)),
  });
  const bindings = new BindingResolver(db, config.topicPrefix);
  const now = () => clock.now();
  const authenticateToken = createTokenAuthenticator(deps.bearerVerifiers, deps.directory, app.log);
  let publisher: PublishService | null = null;
  const broker = new BrokerManager({
    host: config.httpHost,
    namespace: config.mqttNamespace,
    topicPrefix: config.topicPrefix,
    now,
    db,
    authenticate: authenticateToken,
    publisher: () => publisher!,
    log: app.log,
    onModeChange: (mode) => {
      if (mode === 'disabled') delete deps.readiness.broker;
      else deps.readiness.broker = () => broker.ready();
    },
  });
  publisher = new PublishService({
    committer,
    bindings,
    clock,
    futureToleranceSeconds: config.unsFutureTolerance,
    fanout: () => broker,
  });
  const settings = new UnsSettingsService({ db, config, storage, layout, broker });
  await settings.load();
  const topics = new TopicsService({ db, writer, bindings, clock, prefix: config.topicPrefix });
  const schemas = new SchemasService({ db, bindings, clock, prefix: config.topicPrefix });

  const applyRetention = async () => {
    const days = settings.retentionDays();
    if (days <= 0) return 'retention is off';
    return layout.applyRetention((clock.now() - days * 86_400_000) * 1000);
  };
  const runtime: UnsRuntime = {
    layout,
    writer,
    committer,
    bindings,
    publisher,
    broker,
    settings,
    topics,
    schemas,
    authenticateToken,
    bearerVerifiers: deps.bearerVerifiers,
    applyRetention,
  };
  app.decorate('uns', runtime);

  await app.register(publishRoutes, {
    prefix: '/api/v1/uns/data',
    publisher,
    topicPrefix: config.topicPrefix,
    now,
    batchBodyLimit: config.batchBodyLimit,
  });
  await app.register(dataRoutes, { prefix: '/api/v1/uns/data', db, topics, clock });
  await app.register(schemasRoutes, { prefix: '/api/v1/uns/topics', schemas, topics });
  await app.register(topicsRoutes, { prefix: '/api/v1/uns/topics', topics });
  await app.register(brokerRoutes, { prefix: '/api/v1/uns/broker', broker });
  await app.register(unsSettingsRoutes, { prefix: '/api/v1/system/uns/settings', settings });

  let retentionTimer: NodeJS.Timeout | undefined;
  app.addHook('onReady', async () => {
    await broker.apply(settings.brokerSettings());
    const run = () =>
      applyRetention().catch((error: unknown) => app.log.warn({ err: error }, 'uns retention failed'));
    retentionTimer = setInterval(run, HOUR_MS);
    retentionTimer.unref();
    void run();
  });
  app.addHook('onClose', async () => {
    clearInterval(retentionTimer);
    await broker.stop();
    await committer.drain();
  });
  return runtime;
}
