import type { FastifyInstance } from 'fastify';
import { sql } from 'kysely';
import { buildApp } from '../app.js';
import type { Config } from '../config/config.schema.js';
import { bootstrapIfEmpty } from '../modules/bootstrap/bootstrap.service.js';
import { systemClock } from '../platform/clock.js';
import { tuneGarbageCollector } from '../platform/gc-tuning.js';
import {
  createLocalInvalidationBus,
  createPostgresInvalidationBus,
  type InvalidationBus,
} from '../platform/invalidation-bus.js';
import { openStorage, type Storage } from '../storage/database.js';
import { migrateToLatest } from '../storage/migrator.js';

/** A running server: what `meridian serve` starts and what shutdown closes. */
export interface RunningServer {
  app: FastifyInstance;
  storage: Storage;
  url: string;
  close(): Promise<void>;
}

/** Opens storage, migrates, bootstraps an empty database, builds the app and listens. */
export async function startServer(
  config: Config,
  print: (line: string) => void = console.log,
): Promise<RunningServer> {
  tuneGarbageCollector();
  const storage = openStorage({
    databaseUrl: config.databaseUrl,
    dataDir: config.dataDir,
    poolSize: config.databasePoolSize,
  });
  try {
    await migrateToLatest(storage);
    const admin = await bootstrapIfEmpty({ db: storage.db, clock: systemClock }, config);
    if (admin) {
      print('');
      print('  Meridian created the first organization and System Administrator:');
      print(`    organization id: ${admin.organizationId}`);
      print(`    email:           ${admin.email}`);
      if (admin.generatedPassword) {
        print(`    password:        ${admin.generatedPassword}`);
        print('  This password is shown once and never again. Sign in and change it.');
      } else print('    password:        the value of MERIDIAN_ADMIN_PASSWORD');
      print('');
    }
  } catch (error) {
    await storage.close();
    throw error;
  }

  const bus = await openInvalidationBus(config, storage);
  const app = await buildApp({ config, storage, bus });
  try {
    await app.listen({ host: config.httpHost, port: config.httpPort });
  } catch (error) {
    await app.close();
    await bus.close();
    await storage.close();
    if ((error as NodeJS.ErrnoException).code === 'EADDRINUSE') {
      throw new Error(`HTTP port ${config.httpPort} is taken: choose another with MERIDIAN_HTTP_PORT`);
    }
    throw error;
  }
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : config.httpPort;
  let closing: Promise<void> | undefined;
  return {
    app,
    storage,
    url: `http://${config.httpHost === '0.0.0.0' ? '127.0.0.1' : config.httpHost}:${port}`,
    close() {
      // Stop accepting, let in-flight requests finish, then close storage.
      closing ??= app
        .close()
        .then(() => bus.close())
        .then(() => storage.close());
      return closing;
    },
  };
}

/** On PostgreSQL, replicas hear of each other's changes through LISTEN/NOTIFY; on SQLite there is one process. */
async function openInvalidationBus(config: Config, storage: Storage): Promise<InvalidationBus> {
  if (storage.dialect !== 'postgres' || !config.databaseUrl) return createLocalInvalidationBus();
  return createPostgresInvalidationBus({
    databaseUrl: config.databaseUrl,
    notify: async (channel, payload) => {
      await sql`select pg_notify(${channel}, ${payload})`.execute(storage.db);
    },
  });
}
