import cookie from '@fastify/cookie';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import Fastify, { type FastifyInstance } from 'fastify';
import type { Config } from './config/config.schema.js';
import { installBundles } from './modules/bundles/bundle.module.js';
import { connectionKind } from './modules/connections/connections/connection-kind.js';
import {
  type ConnectionRuntimeOptions,
  installConnections,
} from './modules/connections/connections.module.js';
import {
  checkEdgeWriteTargets,
  edgeFunctionWrite,
} from './modules/connections/functions/edge-write-targets.js';
import { functionKind } from './modules/connections/functions/function-kind.js';
import { installConsole } from './modules/console/console.module.js';
import { dashboardKind } from './modules/dashboards/dashboards/dashboard-kind.js';
import { installDashboards } from './modules/dashboards/dashboards.module.js';
import { folderKind } from './modules/dashboards/folders/folder-kind.js';
import { installEngine } from './modules/engine/engine.module.js';
import { modelKind } from './modules/engine/models/model-kind.js';
import { pipelineKind } from './modules/engine/pipelines/pipeline-kind.js';
import { DependencyEdges } from './modules/graph/edges/edges.repository.js';
import { installGraph } from './modules/graph/graph.module.js';
import { EntityKinds } from './modules/graph/kinds/entity-kinds.js';
import { installHealth } from './modules/health/health.module.js';
import type { ReadinessCheck } from './modules/health/health.routes.js';
import { createOAuth2Module } from './modules/oauth2/oauth2.module.js';
import { installOrganizationSettings } from './modules/organizations/organization-settings.module.js';
import { installOrganizations } from './modules/organizations/organizations.module.js';
import { settingsKind } from './modules/organizations/settings/settings-exchange.js';
import { installSessions } from './modules/sessions/sessions.module.js';
import { SessionsService } from './modules/sessions/sessions.service.js';
import { installTokens } from './modules/tokens/tokens.module.js';
import { TokensService } from './modules/tokens/tokens.service.js';
import { registerStorageMetrics } from './modules/uns/historian/segments/storage-figures.js';
import type { RollupJobOptions } from './modules/uns/rollups/rollup-job.js';
import { topicKind } from './modules/uns/topics/topic-kind.js';
import { installUns } from './modules/uns/uns.module.js';
import { createAccessDirectory } from './modules/users/access-directory.js';
import { installUsers } from './modules/users/users.module.js';
import { EntityVersionsRepository } from './modules/versions/entity-versions.repository.js';
import { type BearerVerifier, installAccessControl } from './platform/access-control.js';
import { type Clock, systemClock } from './platform/clock.js';
import { egressPolicyOf, type LookupAll } from './platform/egress/egress-policy.js';
import { EntityEvents } from './platform/entity-events.js';
import { unavailable } from './platform/errors.js';
import { answerFrameworkError, installErrorHandling, sendApiError } from './platform/http/error-handler.js';
import { installJsonBodyParser } from './platform/http/json-body.js';
import { installMetrics, latencyHistogram } from './platform/http/metrics.js';
import { installOpenApi } from './platform/http/openapi.js';
import { loggingOptions } from './platform/http/request-logging.js';
import { fastifyTrustProxy } from './platform/http/trust-proxy.js';
import { createLocalInvalidationBus, type InvalidationBus } from './platform/invalidation-bus.js';
import { PACKAGE_VERSION } from './platform/package-version.js';
import { ErrorBody, UnauthorizedBody } from './platform/schemas.js';
import { validatorCompiler } from './platform/validation.js';
import type { Storage } from './storage/database.js';

export interface AppDeps {
  config: Config;
  storage: Storage;
  clock?: Clock;
  /** Announces changes that cached state depends on; default: this process only. */
  bus?: InvalidationBus;
  version?: string;
  /** Timing of the connection runtime supervisor (tests shorten leases and backoff). */
  connectionRuntime?: ConnectionRuntimeOptions;
  /** Timing of the background rollup job (tests run it by hand). */
  rollupJob?: RollupJobOptions;
  /** The DNS the egress policy asks (default: the system's); tests answer names of their own. */
  egressLookup?: LookupAll;
  /** Readiness checks of the caller's own, besides storage and the modules' (`/readyz`). */
  readiness?: Record<string, ReadinessCheck>;
}

/** The package's version (package.json): the API document's `info.version` and export bundles' `meridian`. */
export const VERSION = PACKAGE_VERSION;

/** Builds the HTTP application without listening: platform plugins first, then every module. */
export async function buildApp(deps: AppDeps): Promise<FastifyInstance> {
  const { config, storage } = deps;
  const clock = deps.clock ?? systemClock;
  const bus = deps.bus ?? createLocalInvalidationBus();
  const directory = createAccessDirectory(storage.db, bus);
  const db = storage.db;

  const app = Fastify({
    ...loggingOptions(config.logLevel),
    bodyLimit: config.bodyLimit,
    trustProxy: fastifyTrustProxy(config.trustProxy),
    // Shutdown answers 503 in the documented shape (the onRequest hook below), not Fastify's own body.
    return503OnClosing: false,
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: 2048 },
    frameworkErrors: answerFrameworkError,
    forceCloseConnections: 'idle',
    // Slow clients: a request must arrive whole within 30 s, its headers within 10 s.
    requestTimeout: 30_000,
    // Idle keep-alive outlives a load balancer's (60 s on common ones); shorter, the balancer reuses a
    // socket the server is closing and answers 502.
    keepAliveTimeout: 72_000,
    // Headers must arrive within 10 s; checked every 2 s (Node's default check interval is 30 s).
    http: { headersTimeout: 10_000, connectionsCheckingInterval: 2_000 },
  }).withTypeProvider<TypeBoxTypeProvider>();

  app.setValidatorCompiler(validatorCompiler);
  installErrorHandling(app, config.bodyLimit);
  app.addSchema(ErrorBody);
  app.addSchema(UnauthorizedBody);
  let closing = false;
  app.addHook('preClose', async () => {
    closing = true;
  });
  // Callback style, like the other per-request hooks: an async hook costs a promise on every request.
  app.addHook('onRequest', (request, reply, done) => {
    reply.header('x-request-id', request.id);
    reply.header('x-content-type-options', 'nosniff');
    // A request arriving on an open connection after shutdown began (Fastify adds Connection: close).
    if (closing) sendApiError(reply, unavailable('the server is shutting down; retry', 1));
    else done();
  });

  // JSON only: the API refuses other bodies with 400. The OAuth2 endpoints add the form parser in their own scope.
  app.removeContentTypeParser('text/plain');
  // An empty body sent as application/json is no body (a shell's header array sends the type on every request).
  installJsonBodyParser(app);
  await app.register(cookie);
  await installOpenApi(app, { issuer: config.issuer, version: deps.version ?? VERSION });
  const metrics = installMetrics(app);

  const sessions = new SessionsService({ db, clock, config });
  const pats = new TokensService({ db, clock, maxPerUser: config.patMaxPerUser });
  const oauth2 = await createOAuth2Module({ db, storage, config, clock, sessions, pats, bus, directory });
  // One live list: MQTT authenticates tokens through the same verifiers (see installUns).
  const bearerVerifiers: BearerVerifier[] = [oauth2.accessTokens, pats];
  installAccessControl(app, {
    directory,
    bearerVerifiers,
    sessionVerifier: sessions,
  });

  // The UNS adds `broker` while a broker is configured.
  const readiness: Record<string, ReadinessCheck> = { storage: () => storage.ping(), ...deps.readiness };
  await installHealth(app, { checks: readiness });
  await installSessions(app, { sessions, db, issuer: config.issuer });
  await installUsers(app, { db, clock, bus });
  await installOrganizations(app, { db, clock, bus });
  const organizationSettings = await installOrganizationSettings(app, {
    db,
    clock,
    bus,
    // The connections module is installed later; a settings change is checked once the app runs.
    checkReferences: (organizationId, document) =>
      checkEdgeWriteTargets(
        app.connectors.functions,
        organizationId,
        document.sparkplug.edgeNode,
        config.topicPrefix,
      ),
    access: {
      bearerVerifiers,
      sessionVerifier: sessions,
      directory,
      intervalMs: config.unsStreamRecheck * 1000,
    },
  });
  await oauth2.register(app);
  await installTokens(app, { tokens: pats });
  await installUns(app, {
    config,
    storage,
    clock,
    directory,
    bus,
    bearerVerifiers,
    sessionVerifier: sessions,
    readiness,
    rollupJob: deps.rollupJob,
    sparkplugPrimaryHost: {
      hostIdOf: async (organizationId) =>
        (await organizationSettings.documentOf(organizationId)).sparkplug.hostId,
      edgeNodeOf: async (organizationId) =>
        (await organizationSettings.documentOf(organizationId)).sparkplug.edgeNode,
      functionWrite: () =>
        app.hasDecorator('connectors') ? edgeFunctionWrite(app.connectors.functions) : null,
      onChange: (listener) => organizationSettings.onChange(listener),
    },
  });
  registerStorageMetrics(metrics, app.uns.figures);
  const commitLatency = app.uns.committer.latency;
  metrics.registerMetric(
    latencyHistogram(
      'meridian_historian_commit_seconds',
      'Historian group commits: seconds from handing a shared transaction over to its commit.',
      commitLatency.commit,
    ),
  );
  metrics.registerMetric(
    latencyHistogram(
      'meridian_historian_commit_wait_seconds',
      'Publishes (HTTP, MQTT, batches): seconds each waited for its shared transaction to begin.',
      commitLatency.wait,
    ),
  );
  // Every configuration entity kind, in the order an import writes them (each after what it refers to):
  // what the dependency graph, export and import know of each, implemented beside its module.
  const kinds = new EntityKinds([
    folderKind,
    connectionKind,
    functionKind,
    modelKind,
    pipelineKind,
    dashboardKind,
    topicKind,
    settingsKind,
  ]);
  const edges = new DependencyEdges(kinds);
  await installGraph(app, { storage, clock, kinds, edges });
  const events = new EntityEvents(bus, (error, change) =>
    app.log.warn({ err: error, change }, 'an entity change was not applied everywhere'),
  );
  app.addHook('onClose', async () => events.close());
  const versions = new EntityVersionsRepository(db);
  await installEngine(app, { config, storage, clock, events, bus, versions, edges, metrics });
  await installDashboards(app, { storage, clock, topicPrefix: config.topicPrefix, edges, events });
  // Meridian's own ports: the HTTP port it listens on (known once it listens) and the embedded broker's.
  const ownPorts = () => {
    const address = app.server.address();
    const http = typeof address === 'object' && address ? address.port : config.httpPort;
    return config.mqttUrl || config.mqttPort === 0 ? [http] : [http, config.mqttPort];
  };
  await installConnections(app, {
    config,
    storage,
    clock,
    metrics,
    runtime: deps.connectionRuntime,
    bus,
    versions,
    egress: egressPolicyOf(config, ownPorts, deps.egressLookup),
    edges,
    events,
  });
  await installBundles(app, {
    config,
    storage,
    clock,
    bus,
    events,
    versions,
    edges,
    kinds,
    meridianVersion: deps.version ?? VERSION,
  });
  // Last: the web console answers the GETs no module claimed (its client-side routes).
  await installConsole(app);
  return app;
}
