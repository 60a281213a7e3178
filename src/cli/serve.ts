import { createServer } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { sql } from 'kysely';
import { buildApp } from '../app.js';
import type { Config } from '../config/config.schema.js';
import { bootstrapIfEmpty } from '../modules/bootstrap/bootstrap.service.js';
import { mqttPortTaken } from '../modules/uns/mqtt/embedded/embedded-broker.js';
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

/**
 * Checks that every port is free, opens storage, migrates, builds the app and listens; only then, with
 * every port bound, bootstraps an empty database. A start that fails on a taken port writes nothing, so
 * the next start is still the first one and prints the generated password.
 */
export async function startServer(
  config: Config,
  print: (line: string) => void = console.log,
): Promise<RunningServer> {
  tuneGarbageCollector();
  await ensurePortsFree(config);
  const storage = openStorage({
    databaseUrl: config.databaseUrl,
    dataDir: config.dataDir,
    poolSize: config.databasePoolSize,
  });
  try {
    await migrateToLatest(storage);
  } catch (error) {
    await storage.close();
    throw error;
  }

  const bus = await openInvalidationBus(config, storage);
  // Ready once the first administrator of an empty database exists: `/readyz` answered 200 while the
  // bootstrap below still hashed the password, and a sign-in right after it was refused (401).
  let bootstrapped = false;
  const administrator = async () => {
    if (!bootstrapped) throw new Error('the first administrator is being created');
  };
  const app = await buildApp({ config, storage, bus, readiness: { administrator } });
  try {
    await app.listen({ host: config.httpHost, port: config.httpPort });
    await bootstrap(config, storage, app, print);
    bootstrapped = true;
  } catch (error) {
    await app.close();
    await bus.close();
    await storage.close();
    if ((error as NodeJS.ErrnoException).code === 'EADDRINUSE')
      throw new Error(httpPortTaken(config.httpPort));
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

/** On an empty database, creates and prints the first administrator; otherwise says when the password set is ignored. */
async function bootstrap(
  config: Config,
  storage: Storage,
  app: FastifyInstance,
  print: (line: string) => void,
): Promise<void> {
  const admin = await bootstrapIfEmpty({ db: storage.db, clock: systemClock }, config);
  if (!admin) {
    if (config.adminPassword !== undefined) app.log.warn(adminPasswordIgnored(config.adminEmail));
    return;
  }
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

/** The one line a start logs when MERIDIAN_ADMIN_PASSWORD is set on a database that has its administrator. */
export function adminPasswordIgnored(email: string): string {
  return (
    'MERIDIAN_ADMIN_PASSWORD was ignored: it applies only to the first start on an empty database, and this ' +
    `database already has its administrator; to set its password run: npm run meridian -- admin reset-password --email ${email} --password '<new password>'`
  );
}

function httpPortTaken(port: number): string {
  return `HTTP port ${port} is taken: choose another with MERIDIAN_HTTP_PORT`;
}

/**
 * Binds and releases the HTTP port and, when the embedded broker runs, the MQTT port, before storage is
 * touched: a taken port stops the start before anything is written. (The real listen checks again.)
 */
async function ensurePortsFree(config: Config): Promise<void> {
  const ports: { port: number; taken: string }[] = [];
  if (config.httpPort !== 0) ports.push({ port: config.httpPort, taken: httpPortTaken(config.httpPort) });
  if (!config.mqttUrl && config.mqttPort !== 0) {
    ports.push({ port: config.mqttPort, taken: mqttPortTaken(config.mqttPort) });
  }
  for (const { port, taken } of ports) {
    await new Promise<void>((resolve, reject) => {
      const probe = createServer();
      probe.once('error', (error: NodeJS.ErrnoException) =>
        reject(error.code === 'EADDRINUSE' ? new Error(taken) : error),
      );
      probe.listen({ port, host: config.httpHost, exclusive: true }, () => probe.close(() => resolve()));
    });
  }
}
