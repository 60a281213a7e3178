import type { FastifyInstance } from 'fastify';
import { type AppDeps, buildApp } from '../../src/app.js';
import type { Config } from '../../src/config/config.schema.js';
import { loadConfig } from '../../src/config/load-config.js';
import { bootstrapIfEmpty } from '../../src/modules/bootstrap/bootstrap.service.js';
import { type Clock, systemClock } from '../../src/platform/clock.js';
import type { InvalidationBus } from '../../src/platform/invalidation-bus.js';
import { type DialectName, openStorage, type Storage } from '../../src/storage/database.js';
import { migrateToLatest } from '../../src/storage/migrator.js';
import { createTestDatabase } from './dialects.js';
import { freePort } from './free-port.js';
import { TestClient } from './http-client.js';

export const ADMIN_EMAIL = 'admin@example.com';
export const ADMIN_PASSWORD = 'admin-password-for-tests';

export interface TestServer {
  dialect: DialectName;
  url: string;
  app: FastifyInstance;
  storage: Storage;
  config: Config;
  /** The first organization, created by bootstrap. */
  orgId: string;
  adminId: string;
  /** An anonymous client. */
  client: TestClient;
  /** A client signed in as the bootstrap System Administrator, in the first organization. */
  admin: TestClient;
  close(): Promise<void>;
}

export interface TestServerOptions {
  config?: Partial<Config>;
  clock?: Clock;
  /** The invalidation bus (default: the app's own); one bus shared by two apps makes them replicas. */
  bus?: InvalidationBus;
  /** A PostgreSQL server other than the shared one (e.g. a private one the test restarts). */
  pgAdminUrl?: string;
  /** Adds routes or hooks before the server listens (e.g. a route that throws, for the 500 test). */
  extend?: (app: FastifyInstance) => void | Promise<void>;
  /** Timing of the connection runtime supervisor (short leases and backoff in tests). */
  connectionRuntime?: AppDeps['connectionRuntime'];
  /** Timing of the background rollup job; default: it never ticks by itself (tests call `tick`). */
  rollupJob?: AppDeps['rollupJob'];
  /** The DNS the egress policy asks (default: the system's). */
  egressLookup?: AppDeps['egressLookup'];
}

/**
 * A Meridian on a fresh database of the dialect, listening on a free port of 127.0.0.1; its connections
 * may reach devices on 127.0.0.1 (MERIDIAN_EGRESS_ALLOW=127.0.0.1, unless `config.egressAllow` says otherwise).
 */
export async function startTestServer(
  dialect: DialectName,
  options: TestServerOptions = {},
): Promise<TestServer> {
  const database = await createTestDatabase(dialect, options.pgAdminUrl);
  const port = await freePort();
  const config = loadConfig(
    {},
    {
      httpHost: '127.0.0.1',
      httpPort: port,
      mqttPort: 0,
      dataDir: database.dataDir,
      databaseUrl: database.databaseUrl,
      logLevel: (process.env.MERIDIAN_TEST_LOG_LEVEL as Config['logLevel']) ?? 'silent',
      adminEmail: ADMIN_EMAIL,
      adminPassword: ADMIN_PASSWORD,
      // The devices tests start listen on loopback, which the egress policy denies by default.
      egressAllow: ['127.0.0.1'],
      ...options.config,
    },
  );
  const storage = openStorage({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, poolSize: 5 });
  const clock = options.clock ?? systemClock;
  let app: FastifyInstance | undefined;
  const start = async () => {
    await migrateToLatest(storage);
    const created = await bootstrapIfEmpty({ db: storage.db, clock }, config);
    if (!created) throw new Error('bootstrap did not run on a fresh database');
    app = await buildApp({
      config,
      storage,
      clock,
      bus: options.bus,
      connectionRuntime: options.connectionRuntime,
      rollupJob: options.rollupJob ?? { tickMs: 0 },
      egressLookup: options.egressLookup,
    });
    await options.extend?.(app);
    await app.listen({ host: '127.0.0.1', port });
    return { started: app, created };
  };
  const { started, created } = await start().catch(async (error: unknown) => {
    // A server that failed to start must not keep the test process alive (its engine, broker and pools
    // would hold the event loop open until the runner's timeout).
    await app?.close().catch(() => {});
    await storage.close().catch(() => {});
    await database.drop().catch(() => {});
    throw error;
  });
  const url = config.issuer;
  const client = new TestClient(url);
  const admin = await client.login(ADMIN_EMAIL, ADMIN_PASSWORD, created.organizationId);
  return {
    dialect,
    url,
    app: started,
    storage,
    config,
    orgId: created.organizationId,
    adminId: created.userId,
    client,
    admin,
    async close() {
      await started.close();
      await storage.close();
      await database.drop();
    },
  };
}
