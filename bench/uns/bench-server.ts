/**
 * Shared set-up of the UNS benchmarks: a real Meridian (startServer, as `meridian serve` runs it) on a
 * fresh SQLite directory or PostgreSQL database, a signed-in administrator, and a bearer token.
 */
import { type RunningServer, startServer } from '../../src/cli/serve.js';
import type { Config } from '../../src/config/config.schema.js';
import { loadConfig } from '../../src/config/load-config.js';
import type { DialectName } from '../../src/storage/database.js';
import { createTestDatabase, type TestDatabase } from '../../test/helpers/dialects.js';
import { freePort } from '../../test/helpers/free-port.js';
import { TestClient } from '../../test/helpers/http-client.js';

export interface BenchServer {
  server: RunningServer;
  database: TestDatabase;
  admin: TestClient;
  orgId: string;
  /** A bearer token with uns:publish and uns:read, and which kind it is. */
  token: string;
  tokenKind: 'JWT access token (client credentials)' | 'personal access token';
  close(): Promise<void>;
}

const PASSWORD = 'bench-admin-password';

/** Starts Meridian for a benchmark. */
export async function startBenchServer(
  dialect: DialectName,
  overrides: Partial<Config> = {},
): Promise<BenchServer> {
  const database = await createTestDatabase(dialect);
  const config = loadConfig(
    {},
    {
      httpHost: '127.0.0.1',
      httpPort: await freePort(),
      mqttPort: 0,
      dataDir: database.dataDir,
      databaseUrl: database.databaseUrl,
      logLevel: 'warn',
      adminEmail: 'admin@example.com',
      adminPassword: PASSWORD,
      databasePoolSize: 20,
      ...overrides,
    },
  );
  const server = await startServer(config, () => {});
  const base = new TestClient(server.url);
  const admin = await base.login('admin@example.com', PASSWORD);
  const orgs = await admin.get('/api/v1/organizations');
  const orgId = orgs.body.data[0].id as string;
  const scopes = ['uns:publish', 'uns:read'];
  let token: string | null = null;
  let tokenKind: BenchServer['tokenKind'] = 'JWT access token (client credentials)';
  const client = await admin.inOrg(orgId).post('/api/v1/oauth2/clients', {
    name: 'bench',
    description: 'UNS benchmark',
    clientType: 'confidential',
    grantTypes: ['client_credentials'],
    redirectUris: [],
    allowedScopes: scopes,
  });
  if (client.status === 201) {
    const response = await fetch(`${server.url}/api/v1/oauth2/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'client_credentials',
        client_id: client.body.data.clientId,
        client_secret: client.body.data.clientSecret,
        scope: scopes.join(' '),
      }),
    });
    if (response.status === 200) token = ((await response.json()) as { access_token: string }).access_token;
  }
  if (!token) {
    tokenKind = 'personal access token';
    const pat = await admin
      .inOrg(orgId)
      .post('/api/v1/oauth2/tokens', { name: 'bench', scopes, expiresInDays: 30 });
    token = pat.body.data.token as string;
  }
  return {
    server,
    database,
    admin: admin.inOrg(orgId),
    orgId,
    token,
    tokenKind,
    async close() {
      await server.close();
      await database.drop();
    },
  };
}

/** Prints a measured pair and its ratio. */
export function report(name: string, measured: number, baseline: number, unit: string, target: number): void {
  const ratio = measured / baseline;
  const verdict = ratio >= target ? 'meets' : 'BELOW';
  console.log(
    `${name}: ${measured.toFixed(0)} ${unit} vs baseline ${baseline.toFixed(0)} ${unit} = ${ratio.toFixed(2)}x (target ${target}x: ${verdict})`,
  );
}
