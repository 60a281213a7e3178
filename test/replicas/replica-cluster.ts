import { randomBytes } from 'node:crypto';
import { createTestDatabase, type TestDatabase } from '../helpers/dialects.js';
import { freePort } from '../helpers/free-port.js';
import { TestClient } from '../helpers/http-client.js';
import { type MeridianProcess, runMeridian } from '../helpers/process.js';

export const CLUSTER_ADMIN_PASSWORD = 'cluster-admin-password';

export interface Replica {
  url: string;
  process: MeridianProcess;
  client: TestClient;
}

export interface ReplicaCluster {
  database: TestDatabase;
  /** What every replica shares: database, broker, issuer, key-encryption key. */
  env: Record<string, string>;
  replicas: Replica[];
  /** Runs a `meridian` command (e.g. `keys rotate`) against the shared database. */
  run(args: string[]): MeridianProcess;
  stop(): Promise<void>;
}

/**
 * Several Meridian processes on one PostgreSQL database and the Mosquitto on 127.0.0.1:1883, as behind a
 * load balancer: one public issuer, one key-encryption key, different ports, nothing else shared.
 * `extraEnv` adds or overrides variables of every replica.
 */
export async function startReplicaCluster(
  count: number,
  extraEnv: Record<string, string> = {},
): Promise<ReplicaCluster> {
  const database = await createTestDatabase('postgres');
  const env: Record<string, string> = {
    DATABASE_URL: database.databaseUrl!,
    MQTT_URL: 'mqtt://127.0.0.1:1883',
    MERIDIAN_MQTT_NAMESPACE: `meridian-test-${randomBytes(4).toString('hex')}`,
    MERIDIAN_ISSUER: 'http://meridian.replicas.test',
    MERIDIAN_KEY_ENCRYPTION_KEY: randomBytes(32).toString('hex'),
    MERIDIAN_ADMIN_PASSWORD: CLUSTER_ADMIN_PASSWORD,
    MERIDIAN_HTTP_HOST: '127.0.0.1',
    MERIDIAN_MQTT_PORT: '0',
    MERIDIAN_LOG_LEVEL: 'info',
    MERIDIAN_DATA_DIR: database.dataDir,
    ...extraEnv,
  };
  const replicas: Replica[] = [];
  try {
    for (let i = 0; i < count; i++) {
      const port = await freePort();
      const process = runMeridian(['serve'], { ...env, MERIDIAN_HTTP_PORT: String(port) });
      // A bound, not a timing: a loaded machine takes over a minute to start a replica from source.
      await process.waitFor(/Meridian ready/, 180_000);
      const url = `http://127.0.0.1:${port}`;
      replicas.push({ url, process, client: new TestClient(url) });
    }
  } catch (error) {
    for (const r of replicas) r.process.child.kill('SIGKILL');
    await database.drop();
    throw error;
  }
  return {
    database,
    env,
    replicas,
    run: (args) => runMeridian(args, env),
    async stop() {
      for (const r of replicas) r.process.child.kill('SIGTERM');
      await Promise.all(replicas.map((r) => r.process.exited));
      await database.drop();
    },
  };
}

/** Polls `check` until it passes or `withinMs` runs out; returns how long it took. */
export async function eventually(check: () => Promise<void>, withinMs = 1000): Promise<number> {
  const started = Date.now();
  for (;;) {
    try {
      await check();
      return Date.now() - started;
    } catch (error) {
      if (Date.now() - started > withinMs) throw error;
      await new Promise((r) => setTimeout(r, 25));
    }
  }
}
