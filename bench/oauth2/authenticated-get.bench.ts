/**
 * What authentication costs on the hot path: an authenticated GET (access token: cached signature
 * check, revocation check, one standing read, scope check) against an unauthenticated GET of the same
 * handler on the same server, and against /healthz. Target: at least 0.8x.
 *
 * The public handler is also measured with the authenticated request's headers (a ~560-character
 * token): what remains between those two is the access check itself; the rest of the gap to the bare
 * public GET is parsing the larger request, on the server and in the load generator (same process).
 *
 * Run: npx tsx bench/oauth2/authenticated-get.bench.ts [seconds]
 */
import { startTestServer } from '../../test/helpers/test-server.js';
import { clientCredentials, registerClient } from '../../test/oauth2/oauth2-helpers.js';
import { load, rate } from './load.js';

const seconds = Number(process.argv[2] ?? 8);
const rounds = 4;

async function main() {
  const server = await startTestServer('sqlite', {
    extend: (app) => {
      // The same small handler twice: one public, one behind the request contract.
      const handler = async () => ({ data: { status: 'ok' } });
      app.get('/api/v1/bench/public', { config: { access: { public: true } } }, handler);
      app.get('/api/v1/bench/private', { config: { access: { scope: 'organizations:read' } } }, handler);
    },
  });
  const client = await registerClient(server, {
    grantTypes: ['client_credentials'],
    redirectUris: [],
    allowedScopes: ['organizations:read'],
  });
  const token = (await clientCredentials(server, client)).body.access_token as string;
  const authHeaders = { authorization: `Bearer ${token}`, 'x-organization-id': server.orgId };
  const check = await fetch(`${server.url}/api/v1/bench/private`, { headers: authHeaders });
  if (check.status !== 200) throw new Error(`authenticated GET answered ${check.status}`);

  const targets = {
    authenticated: { url: `${server.url}/api/v1/bench/private`, headers: authHeaders },
    public: { url: `${server.url}/api/v1/bench/public` },
    publicSameHeaders: { url: `${server.url}/api/v1/bench/public`, headers: authHeaders },
    healthz: { url: `${server.url}/healthz` },
  };
  for (const target of Object.values(targets)) await load({ ...target, seconds: 1 });
  // Interleaved, in short rounds, so that a burst of other load on the machine hits every target alike.
  const sums = { authenticated: 0, public: 0, publicSameHeaders: 0, healthz: 0 };
  for (let round = 0; round < rounds; round++) {
    for (const [name, target] of Object.entries(targets)) {
      const result = await load({ ...target, seconds: seconds / rounds });
      if (result.non2xx > 0) throw new Error(`${name}: ${result.non2xx} non-2xx answers`);
      sums[name as keyof typeof sums] += result.perSecond / rounds;
    }
  }
  console.log(
    `GET throughput, ${seconds} s each (${rounds} interleaved rounds), 32 connections (autocannon)`,
  );
  console.log(`  authenticated (access token)   ${rate(sums.authenticated)}`);
  console.log(`  public, same handler           ${rate(sums.public)}`);
  console.log(`  public, with the same headers  ${rate(sums.publicSameHeaders)}`);
  console.log(`  /healthz                       ${rate(sums.healthz)}`);
  console.log(
    `  ratio vs public same handler   ${(sums.authenticated / sums.public).toFixed(2)}x (target >= 0.8x)`,
  );
  console.log(
    `  ratio vs public, same headers  ${(sums.authenticated / sums.publicSameHeaders).toFixed(2)}x (the access check alone)`,
  );
  console.log(`  ratio vs /healthz              ${(sums.authenticated / sums.healthz).toFixed(2)}x`);
  await server.close();
}

await main();
