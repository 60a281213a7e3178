import type { FastifyInstance } from 'fastify';
import type { Config } from '../../config/config.schema.js';
import type { AccessDirectory, BearerVerifier, SessionVerifier } from '../../platform/access-control.js';
import type { Clock } from '../../platform/clock.js';
import type { InvalidationBus } from '../../platform/invalidation-bus.js';
import { resolveKeyEncryptionKey } from '../../platform/secrets/key-encryption-key.js';
import type { Storage } from '../../storage/database.js';
import { GroupCommitter } from './historian/group-commit.js';
import { type HistorianLayout, openHistorian } from './historian/historian-layout.js';
import { type CommitJob, HistorianWriter, type HistorianWrites } from './historian/historian-writer.js';
import { COMPACTION_PACE_WHEN_BUSY, CompactionJob } from './historian/segments/compaction-job.js';
import { type SegmentCompactor, segmentCompactor } from './historian/segments/compaction-thread.js';
import { reclaimDisk } from './historian/segments/disk-reclaim.js';
import { LateSegmentMerges } from './historian/segments/late-merges.js';
import { SegmentStore } from './historian/segments/segment-store.js';
import { StorageFigures } from './historian/segments/storage-figures.js';
import { SqliteHistorianThread } from './historian/sqlite-historian-thread.js';
import { LiveValues } from './live/live-values.js';
import { liveValuesRoutes } from './live/live-values.routes.js';
import { BrokerManager } from './mqtt/broker-manager.js';
import { createTokenAuthenticator, type TokenAuthenticator } from './mqtt/mqtt-auth.js';
import { sparkplugLatestUnder } from './mqtt/sparkplug/edge-latest.js';
import { sparkplugUnitsOf } from './mqtt/sparkplug/edge-units.js';
import { SparkplugIngress } from './mqtt/sparkplug-ingress.js';
import type { PrimaryHostSettings } from './mqtt/sparkplug-state.js';
import { publishRoutes } from './publishing/publish.routes.js';
import { PublishService } from './publishing/publish.service.js';
import { createReceiptClock } from './publishing/receipt-clock.js';
import { dataRoutes } from './reading/data.routes.js';
import { writeAndMark } from './rollups/commit-marking.js';
import { RollupJob, type RollupJobOptions } from './rollups/rollup-job.js';
import { HistorianRollups, LATE_VALUES_TOPIC } from './rollups/rollups.js';
import { BindingResolver } from './schemas/binding-resolver.js';
import { schemasRoutes } from './schemas/schemas.routes.js';
import { SchemasService } from './schemas/schemas.service.js';
import { brokerRoutes, unsSettingsRoutes } from './settings/broker.routes.js';
import { sparkplugRoutes } from './settings/sparkplug.routes.js';
import { UnsSettingsService } from './settings/uns-settings.service.js';
import { topicsRoutes } from './topics/topics.routes.js';
import { TopicsService } from './topics/topics.service.js';
import { UNS_TOPICS } from './uns-invalidation.js';

/** The unified namespace of one app instance: its services, its broker and its historian. */
export interface UnsRuntime {
  layout: HistorianLayout;
  writer: HistorianWrites;
  committer: GroupCommitter<CommitJob>;
  bindings: BindingResolver;
  publisher: PublishService;
  broker: BrokerManager;
  settings: UnsSettingsService;
  topics: TopicsService;
  schemas: SchemasService;
  /** Committed values on their way to the live streams (`GET /uns/data/stream`). */
  live: LiveValues;
  /** MQTT's authentication: the same verifiers and rules as HTTP bearer tokens. */
  authenticateToken: TokenAuthenticator;
  /** The live verifier list the access control uses (tests add a test verifier to it). */
  bearerVerifiers: BearerVerifier[];
  /** Applies the retention setting now (also runs hourly). */
  applyRetention(): Promise<string>;
  /** Pre-aggregated history for wide ranges (the dashboard query). */
  rollups: HistorianRollups;
  /** The background job that keeps the rollups ahead of queries (one replica at a time). */
  rollupJob: RollupJob;
  /** The compressed segments of the historian (figures, retention). */
  segments: SegmentStore;
  /**
   * Where compaction and late merges run: a thread with its own connection (compaction-thread.ts), or
   * `segments` itself on an in-memory SQLite database.
   */
  compactor: SegmentCompactor;
  /** The background compaction job (MERIDIAN_UNS_COMPRESS), when on. */
  compaction: CompactionJob | undefined;
  /** Late values into compressed days, merged into their segments right after their commit. */
  lateMerges: LateSegmentMerges;
  /** The compression figures (UNS settings' `storage.compression`, /metrics). */
  figures: StorageFigures;
  /**
   * Told of every commit on this replica once it resolved (pipeline value triggers); must not throw or
   * reject. A promise one answers is awaited before the publish is acknowledged.
   */
  committedListeners: Set<(job: CommitJob) => void | Promise<void>>;
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
  /** Announces settings, binding and topic deletions to every replica (see uns-invalidation.ts). */
  bus: InvalidationBus;
  bearerVerifiers: BearerVerifier[];
  /** The console session check: a live stream opened with a session re-checks it. */
  sessionVerifier: SessionVerifier;
  /** The /readyz checks; `broker` is present while a broker is configured. */
  readiness: Record<string, () => Promise<void>>;
  /** Timing of the background rollup job (tests run it by hand). */
  rollupJob?: RollupJobOptions;
  /** The organizations' Sparkplug primary host ids (organization settings). */
  sparkplugPrimaryHost?: PrimaryHostSettings;
}

const HOUR_MS = 3_600_000;

/**
 * Installs the unified namespace: historian, group commit, schema bindings, routes under
 * `/api/v1/uns` and `/api/v1/system/uns/settings`, and the MQTT broker, which starts when the app is
 * ready (a taken port fails start-up naming MERIDIAN_MQTT_PORT) and stops when it closes, after the
 * pending commits.
 */
export async function installUns(app: FastifyInstance, deps: UnsDeps): Promise<UnsRuntime> {
  const { config, storage, clock, bus } = deps;
  const db = storage.db;
  const layout = await openHistorian(storage);
  // A SQLite file is written on a thread of its own (an in-memory database cannot be shared with one).
  const threaded = layout.kind === 'sqlite-file' && storage.location !== ':memory:';
  const historianThread = threaded ? new SqliteHistorianThread(storage.location, layout.location) : undefined;
  const writer: HistorianWrites = historianThread ?? new HistorianWriter(storage, layout);
  const rollups = new HistorianRollups(
    db,
    storage.dialect,
    () => writer.settle(),
    storage.durableWrite,
    (error) => app.log.warn({ err: error }, 'late values not noted for the rollup job'),
  );
  const rollupJob = new RollupJob({
    ...deps.rollupJob,
    db,
    write: storage.durableWrite,
    rollups,
    clock,
    settle: () => writer.settle(),
    handedOver: () => writer.handedOver,
    log: app.log,
  });
  const segments = new SegmentStore(db, storage.dialect);
  // Off the event loop: decoding, encoding and the statements of compaction (compaction-thread.ts).
  // On a SQLite file, the days it prepares are moved on the historian thread (commitCompaction).
  const compactor = segmentCompactor(storage, layout, segments, config.databaseUrl, historianThread);
  const lateMerges = new LateSegmentMerges({
    db,
    store: compactor,
    settle: () => writer.settle(),
    log: app.log,
  });
  // On by default (MERIDIAN_UNS_COMPRESS): every reader, rollups included, merges segments with rows.
  const compaction = config.unsCompress
    ? new CompactionJob({
        db,
        store: compactor,
        clock,
        settle: () => writer.settle(),
        compressAfterMs: config.unsCompressAfter * 1000,
        // On a thread, the job yields to publishes; on the event loop there is nothing to yield to.
        paceWhenBusy: compactor === segments ? 0 : COMPACTION_PACE_WHEN_BUSY,
        // Asked on the event loop's connection first: the thread starts only when there is work for it.
        hasRowsBefore: compactor === segments ? undefined : (beforeUs) => segments.hasRowsBefore(beforeUs),
        log: app.log,
        reclaim: (beforeUs) => reclaimDisk(db, storage.dialect, beforeUs),
      })
    : undefined;
  const figures = new StorageFigures({
    store: segments,
    enabled: config.unsCompress,
    compressAfterSeconds: config.unsCompressAfter,
    lastRun: () => compaction?.last ?? null,
  });
  const marking = writeAndMark({
    writer,
    rollups,
    lateMerges,
    clock,
    compressAfterSeconds: config.unsCompressAfter,
    announceLate: storage.dialect === 'postgres',
    bus,
    log: app.log,
  });
  const stopHearingLate = bus.subscribe((event) => {
    if (event.topic === LATE_VALUES_TOPIC && event.id) rollups.heard(event.id);
  });
  app.addHook('onClose', async () => stopHearingLate());
  const committer = new GroupCommitter<CommitJob>(marking, {
    windowMs: config.unsCommitWindow,
    maxRecords: config.unsCommitMaxRecords,
    // SQLite has one writer: what arrives while the thread commits shares its next transaction (two in
    // flight to the thread measured the same for batches and 5-10% slower for single publishes).
    // PostgreSQL: one by default. With PostgreSQL, Meridian and the load on two cores, one committer
    // against four gave single HTTP publishes 0.66-0.69x of a plain route against 0.59-0.62x, with
    // PostgreSQL's CPU a publish 11-12 µs against 14-15 µs, and MQTT 0.80-0.84x of aedes against
    // 0.79-0.83x. Pool connections beyond it serve reads.
    concurrency:
      storage.dialect === 'sqlite'
        ? 1
        : Math.max(1, Math.min(config.unsCommitConcurrency, config.databasePoolSize - 2)),
  });
  const bindings = new BindingResolver(db, config.topicPrefix, bus);
  // Receipt times stand for omitted timestamps: strictly increasing, so none replaces another (receipt-clock.ts).
  const now = createReceiptClock(() => clock.now());
  const authenticateToken = createTokenAuthenticator(deps.bearerVerifiers, deps.directory, app.log, () =>
    clock.now(),
  );
  let publisher: PublishService | null = null;
  const committedListeners = new Set<(job: CommitJob) => void | Promise<void>>();
  const live = new LiveValues({ channel: () => broker.liveChannel(), log: app.log });
  const sparkplugSettings = deps.sparkplugPrimaryHost;
  const sparkplug = new SparkplugIngress({
    publisher: () => publisher!,
    prefix: config.topicPrefix,
    now: () => clock.now(),
    log: app.log,
    edge: sparkplugSettings?.edgeNodeOf && {
      settingsOf: (organizationId) => sparkplugSettings.edgeNodeOf!(organizationId),
      latestUnder: (organizationId, prefix) =>
        sparkplugLatestUnder(db, () => writer.settle(), organizationId, prefix),
      unitsOf: (organizationId, topics) => sparkplugUnitsOf(bindings, organizationId, topics),
      writes: { db, functionWrite: () => sparkplugSettings.functionWrite?.() ?? null },
    },
  });
  committedListeners.add((job) => sparkplug.edge?.committed(job));
  // A unit changed with a binding: the edge node's next birth carries it (sparkplug-edge-units.ts).
  const stopUnitWatch = bus.subscribe((event) => {
    if (event.topic === UNS_TOPICS.bindings && event.id) void sparkplug.edge?.bindingsChanged(event.id);
  });
  app.addHook('onClose', async () => stopUnitWatch());
  const broker = new BrokerManager({
    sparkplug,
    primaryHost: deps.sparkplugPrimaryHost,
    host: config.httpHost,
    namespace: config.mqttNamespace,
    topicPrefix: config.topicPrefix,
    now,
    db,
    bus,
    authenticate: authenticateToken,
    sessionRecheckMs: config.mqttSessionRecheck * 1000,
    sparkplugLeaseMs: config.sparkplugLease * 1000,
    clockNow: () => clock.now(),
    publisher: () => publisher!,
    log: app.log,
    onModeChange: (mode) => {
      if (mode === 'disabled') delete deps.readiness.broker;
      else deps.readiness.broker = () => broker.ready();
    },
    deliverLive: (organizationId, values) => live.deliver(organizationId, values),
    onSwapped: () => void live.finishAll('the MQTT broker setting changed; reconnect'),
  });
  publisher = new PublishService({
    committer,
    bindings,
    clock,
    futureToleranceSeconds: config.unsFutureTolerance,
    fanout: () => broker,
    onCommitted: (job) => {
      live.committed(job);
      let waits: Promise<void>[] | undefined;
      for (const listener of committedListeners) {
        const wait = listener(job);
        if (wait) {
          waits ??= [];
          waits.push(wait);
        }
      }
      return waits && Promise.all(waits).then(() => undefined);
    },
  });
  const settings = new UnsSettingsService({
    db,
    config,
    storage,
    layout,
    figures,
    broker,
    bus,
    log: app.log,
    keyEncryptionKey: resolveKeyEncryptionKey(config),
  });
  await settings.load();
  const topics = new TopicsService({ db, writer, bindings, bus, clock, prefix: config.topicPrefix });
  const schemas = new SchemasService({ db, bus, clock, prefix: config.topicPrefix });

  const applyRetention = async () => {
    const days = settings.retentionDays();
    if (days <= 0) return 'retention is off';
    // Staged history (SQLite) is merged first, so that retention reaches it too.
    await writer.settle();
    const cutoffUs = (clock.now() - days * 86_400_000) * 1000;
    const result = await layout.applyRetention(cutoffUs);
    const fromSegments = await segments.dropBefore(cutoffUs);
    await rollups.dropBefore(cutoffUs);
    return fromSegments > 0 ? `${result}; ${fromSegments} compressed values dropped` : result;
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
    live,
    authenticateToken,
    bearerVerifiers: deps.bearerVerifiers,
    applyRetention,
    rollups,
    rollupJob,
    segments,
    compactor,
    compaction,
    lateMerges,
    figures,
    committedListeners,
  };
  app.decorate('uns', runtime);

  await app.register(publishRoutes, {
    prefix: '/api/v1/uns/data',
    publisher,
    topicPrefix: config.topicPrefix,
    now,
    batchBodyLimit: config.batchBodyLimit,
  });
  await app.register(dataRoutes, {
    prefix: '/api/v1/uns/data',
    db,
    topics,
    clock,
    settle: () => writer.settle(),
  });
  await app.register(liveValuesRoutes, {
    prefix: '/api/v1/uns/data',
    live,
    topics,
    access: {
      bearerVerifiers: deps.bearerVerifiers,
      sessionVerifier: deps.sessionVerifier,
      directory: deps.directory,
      bus: deps.bus,
      clock,
      intervalMs: config.unsStreamRecheck * 1000,
    },
    maxStreams: config.unsStreamMax,
    maxStreamsPerCredential: config.unsStreamMaxPerCredential,
    maxStreamsPerOrganization: config.unsStreamMaxPerOrganization,
    heartbeatMs: config.unsStreamHeartbeat * 1000,
  });
  await app.register(schemasRoutes, { prefix: '/api/v1/uns/topics', schemas, topics });
  await app.register(topicsRoutes, { prefix: '/api/v1/uns/topics', topics });
  await app.register(brokerRoutes, { prefix: '/api/v1/uns/broker', broker });
  await app.register(sparkplugRoutes, { prefix: '/api/v1/uns/sparkplug', host: sparkplug.host });
  await app.register(unsSettingsRoutes, { prefix: '/api/v1/system/uns/settings', settings });

  // Open streams would keep the server from closing: they end first, telling clients why; a client
  // that does not read within a second is cut.
  app.addHook('preClose', () => live.finishAll('the server is shutting down', 1000));

  let retentionTimer: NodeJS.Timeout | undefined;
  app.addHook('onReady', async () => {
    await broker.apply(settings.brokerSettings());
    const run = () =>
      applyRetention().catch((error: unknown) => app.log.warn({ err: error }, 'uns retention failed'));
    retentionTimer = setInterval(run, HOUR_MS);
    retentionTimer.unref();
    void run();
    rollupJob.start();
    compaction?.start();
  });
  app.addHook('onClose', async () => {
    clearInterval(retentionTimer);
    await rollupJob.stop();
    await compaction?.stop();
    await lateMerges.idle();
    await settings.close();
    await broker.stop();
    await committer.drain();
    await rollups.notesWritten(); // the late values of the commits drained above
    await writer.close();
    // Last: the commits drained above may have started a late merge.
    await lateMerges.idle();
    await compactor.close?.();
  });
  return runtime;
}
