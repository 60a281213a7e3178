import type { FastifyInstance } from 'fastify';
import { Gauge, type Registry } from 'prom-client';
import type { Config } from '../../config/config.schema.js';
import type { Clock } from '../../platform/clock.js';
import type { EgressPolicy } from '../../platform/egress/egress-policy.js';
import type { EntityEvents } from '../../platform/entity-events.js';
import type { InvalidationBus } from '../../platform/invalidation-bus.js';
import { resolveKeyEncryptionKey } from '../../platform/secrets/key-encryption-key.js';
import type { Storage } from '../../storage/database.js';
import type { EntityVersionsRepository } from '../versions/entity-versions.repository.js';
import type { EdgeWriter } from '../versions/versioned-rows.js';
import { browseRoutes } from './browse/browse.routes.js';
import { ConnectionBrowser } from './browse/browse.service.js';
import { connectionVersionsRoutes } from './connection-versions.routes.js';
import { ConnectionsRepository } from './connections/connections.repository.js';
import { connectionsRoutes } from './connections/connections.routes.js';
import { ConnectionsService } from './connections/connections.service.js';
import { sealPlaintextCredentials } from './connections/credential-sealing.js';
import { FunctionsRepository } from './functions/functions.repository.js';
import { functionsRoutes } from './functions/functions.routes.js';
import { FunctionsService } from './functions/functions.service.js';
import { connectionTestRoutes } from './probe/connection-test.routes.js';
import { runtimeRoutes } from './runtime/runtime.routes.js';
import { ConnectionSupervisor } from './runtime/supervisor.js';
import { StateHistoryRepository } from './state-history/state-history.repository.js';
import { stateHistoryRoutes } from './state-history/state-history.routes.js';

/** Timing of the runtime supervisor (tests shorten them). */
export interface ConnectionRuntimeOptions {
  replicaId?: string;
  leaseMs?: number;
  tickMs?: number;
  reconnectBaseMs?: number;
  /** How long an owner replica has to take a forwarded execute. */
  forwardAckMs?: number;
}

export interface ConnectionsModule {
  connections: ConnectionsService;
  egress: EgressPolicy;
  functions: FunctionsService;
  supervisor: ConnectionSupervisor;
  history: StateHistoryRepository;
}

declare module 'fastify' {
  interface FastifyInstance {
    connectors: ConnectionsModule;
  }
}

const HOUR_MS = 3_600_000;

/**
 * Installs connections, functions, the runtime supervisor and the state history under
 * `/api/v1/connections`. Needs the UNS (values go through its publish service). The supervisor starts
 * when the app is ready and stops before it closes, releasing its leases.
 */
export async function installConnections(
  app: FastifyInstance,
  deps: {
    config: Config;
    storage: Storage;
    clock: Clock;
    metrics: Registry;
    runtime?: ConnectionRuntimeOptions;
    /** The bus between replicas (executes are forwarded to the replica that runs the connection). */
    bus?: InvalidationBus;
    /** The version history connections and functions record their changes in. */
    versions: EntityVersionsRepository;
    /** The policy every outbound connection of a connection passes (and a config is saved against). */
    egress: EgressPolicy;
    /** The dependency graph's edges, rewritten on every save. */
    edges: EdgeWriter;
    /** Where every committed change of a connection is announced. */
    events?: EntityEvents;
  },
): Promise<ConnectionsModule> {
  const { config, storage, clock } = deps;
  const db = storage.db;
  const keyEncryptionKey = resolveKeyEncryptionKey(config);
  const sealed = await sealPlaintextCredentials(db, keyEncryptionKey);
  if (sealed > 0) app.log.info({ connections: sealed }, 'sealed connection credentials stored in plain text');
  const repository = new ConnectionsRepository(db);
  const connections = new ConnectionsService({
    db,
    repository,
    clock,
    keyEncryptionKey,
    versions: deps.versions,
    egress: deps.egress,
    edges: deps.edges,
    events: deps.events,
  });
  const functionsRepository = new FunctionsRepository(db);
  const history = new StateHistoryRepository(db);
  const supervisor = new ConnectionSupervisor({
    db,
    clock,
    connections,
    functions: functionsRepository,
    history,
    publisher: app.uns.publisher,
    topicPrefix: config.topicPrefix,
    dataDir: config.dataDir,
    egress: deps.egress,
    log: app.log,
    bus: deps.bus,
    ...deps.runtime,
  });
  const functions = new FunctionsService({
    db,
    repository: functionsRepository,
    connections,
    clock,
    versions: deps.versions,
    edges: deps.edges,
    topicPrefix: config.topicPrefix,
    executor: () => supervisor,
    changes: (id) => supervisor.changed(id),
  });
  connections.changes = {
    changed: (id) => supervisor.changed(id),
    deleted: (id) => supervisor.deleted(id),
    cloned: (from, clone, actor, trx) => functions.copyAll(from, clone, actor, trx),
  };
  const module: ConnectionsModule = { connections, egress: deps.egress, functions, supervisor, history };
  app.decorate('connectors', module);

  const prefix = '/api/v1/connections';
  await app.register(stateHistoryRoutes, {
    prefix,
    history,
    clock,
    hasConnection: async (organizationId, id) => (await repository.find(organizationId, id)) !== undefined,
  });
  await app.register(runtimeRoutes, { prefix, connections, supervisor });
  await app.register(connectionTestRoutes, { prefix, egress: deps.egress, dataDir: config.dataDir });
  await app.register(connectionsRoutes, { prefix, connections });
  await app.register(functionsRoutes, { prefix, functions });
  const browser = new ConnectionBrowser({
    connections,
    functions,
    egress: deps.egress,
    dataDir: config.dataDir,
  });
  await app.register(browseRoutes, { prefix, browser });
  await app.register(connectionVersionsRoutes, {
    prefix,
    connections,
    functions,
    versions: deps.versions,
    db,
  });

  const labelNames = ['organization', 'connection', 'state'] as const;
  const gauge = (
    name: string,
    help: string,
    pick: (m: ReturnType<ConnectionSupervisor['localMetrics']>[number]) => number,
  ) =>
    new Gauge({
      name,
      help,
      labelNames,
      registers: [deps.metrics],
      collect() {
        this.reset();
        for (const m of supervisor.localMetrics()) {
          this.set({ organization: m.organizationId, connection: m.connectionId, state: m.state }, pick(m));
        }
      },
    });
  gauge(
    'meridian_connection_requests_total',
    'Requests to the device by the connection run on this replica.',
    (m) => m.metrics.requests,
  );
  gauge('meridian_connection_errors_total', 'Failed requests (timeouts included).', (m) => m.metrics.errors);
  gauge(
    'meridian_connection_reconnects_total',
    'Sessions reopened after a loss.',
    (m) => m.metrics.reconnects,
  );
  gauge(
    'meridian_connection_values_published_total',
    'Values published into the UNS.',
    (m) => m.metrics.valuesPublished,
  );
  gauge('meridian_connection_up', '1 while connected or degraded.', (m) =>
    m.state === 'connected' || m.state === 'degraded' ? 1 : 0,
  );

  let retentionTimer: NodeJS.Timeout | undefined;
  app.addHook('onReady', async () => {
    supervisor.start();
    // State history is kept as long as the historian keeps values (the UNS retention setting).
    const purge = () => {
      const days = app.uns.settings.retentionDays();
      if (days > 0) {
        history
          .purge(clock.now() - days * 86_400_000)
          .catch((error: unknown) => app.log.warn({ err: error }, 'state history retention failed'));
      }
    };
    retentionTimer = setInterval(purge, HOUR_MS);
    retentionTimer.unref();
    purge();
  });
  app.addHook('preClose', async () => {
    clearInterval(retentionTimer);
    await supervisor.close();
  });
  return module;
}
