/**
 * Client-credentials token issuance per second: Meridian against panva's oidc-provider configured for
 * the same grant with JWT (ES256) access tokens, both started here, driven by the same autocannon
 * settings, one after the other. Target: Meridian at least 3x.
 *
 * Run: npx tsx bench/oauth2/token-issuance.bench.ts [seconds]
 */
import Fastify from 'fastify';
import { createLocalJWKSet, exportJWK, generateKeyPair, type JSONWebKeySet, jwtVerify } from 'jose';
import Provider from 'oidc-provider';
import { freePort } from '../../test/helpers/free-port.js';
import { startTestServer } from '../../test/helpers/test-server.js';
import { registerClient } from '../../test/oauth2/oauth2-helpers.js';
import { load, rate } from './load.js';

const seconds = Number(process.argv[2] ?? 10);
const form = { 'content-type': 'application/x-www-form-urlencoded' };

async function startOidcProvider() {
  const port = await freePort();
  const es = await generateKeyPair('ES256', { extractable: true });
  const rs = await generateKeyPair('RS256', { extractable: true });
  const audience = 'https://api.example.com';
  const provider = new Provider(`http://127.0.0.1:${port}`, {
    clients: [
      {
        client_id: 'bench',
        client_secret: 'bench-secret-bench-secret-bench-secret',
        grant_types: ['client_credentials'],
        response_types: [],
        redirect_uris: [],
        token_endpoint_auth_method: 'client_secret_post',
      },
    ],
    jwks: {
      keys: [
        { ...(await exportJWK(es.privateKey)), alg: 'ES256', use: 'sig', kid: 'es' },
        { ...(await exportJWK(rs.privateKey)), alg: 'RS256', use: 'sig', kid: 'rs' },
      ],
    },
    scopes: ['uns:read'],
    features: {
      devInteractions: { enabled: false },
      clientCredentials: { enabled: true },
      resourceIndicators: {
        enabled: true,
        defaultResource: () => audience,
        useGrantedResource: () => true,
        getResourceServerInfo: () => ({
          scope: 'uns:read',
          audience,
          accessTokenFormat: 'jwt',
          accessTokenTTL: 3600,
          jwt: { sign: { alg: 'ES256' } },
        }),
      },
    },
  });
  const server = provider.listen(port, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  return {
    url: `http://127.0.0.1:${port}/token`,
    body: 'grant_type=client_credentials&client_id=bench&client_secret=bench-secret-bench-secret-bench-secret&scope=uns%3Aread',
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/**
 * The ceiling: a bare Fastify route that parses the same form body and answers a constant token-shaped
 * JSON. No token endpoint on Fastify can be faster, so it shows how far 3x is reachable on this machine.
 */
async function startBareFastify() {
  const port = await freePort();
  const app = Fastify({ logger: false });
  app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, (_req, body, done) =>
    done(null, Object.fromEntries(new URLSearchParams(body as string))),
  );
  const answer = { access_token: 'x'.repeat(600), token_type: 'bearer', expires_in: 3600, scope: 'uns:read' };
  app.post('/token', async (_request, reply) => reply.header('cache-control', 'no-store').send(answer));
  await app.listen({ host: '127.0.0.1', port });
  return {
    url: `http://127.0.0.1:${port}/token`,
    body: 'grant_type=client_credentials',
    close: () => app.close(),
  };
}

async function main() {
  const meridian = await startTestServer('sqlite', {
    config: { tokenRateLimitPerClient: 100_000_000, tokenRateLimitPerAddress: 100_000_000 },
  });
  const client = await registerClient(meridian, {
    grantTypes: ['client_credentials'],
    redirectUris: [],
    allowedScopes: ['uns:read'],
  });
  const meridianTarget = {
    url: `${meridian.url}/api/v1/oauth2/token`,
    body: new URLSearchParams({
      grant_type: 'client_credentials',
      client_id: client.clientId,
      client_secret: client.clientSecret!,
      scope: 'uns:read',
    }).toString(),
  };
  const baseline = await startOidcProvider();
  const ceiling = await startBareFastify();

  // Both answer a real token before measuring.
  for (const target of [meridianTarget, baseline]) {
    const res = await fetch(target.url, { method: 'POST', headers: form, body: target.body });
    const body = (await res.json()) as { access_token?: string };
    if (res.status !== 200 || !body.access_token?.startsWith('ey'))
      throw new Error(`${target.url}: ${res.status} ${JSON.stringify(body)}`);
  }
  // Meridian's token is a valid RFC 9068 JWT under its own JWKS, with the claims the spec names.
  const sample = (await (
    await fetch(meridianTarget.url, { method: 'POST', headers: form, body: meridianTarget.body })
  ).json()) as { access_token: string };
  const jwks = createLocalJWKSet(
    (await (await fetch(`${meridian.url}/.well-known/jwks.json`)).json()) as JSONWebKeySet,
  );
  const verified = await jwtVerify(sample.access_token, jwks, {
    algorithms: ['ES256'],
    typ: 'at+jwt',
    issuer: meridian.url,
    requiredClaims: ['iss', 'sub', 'client_id', 'scope', 'aud', 'iat', 'exp', 'jti'],
  });
  if (verified.payload.client_id !== client.clientId || verified.payload.scope !== 'uns:read')
    throw new Error(`unexpected claims ${JSON.stringify(verified.payload)}`);
  const run = (target: { url: string; body: string }, s: number) =>
    load({ url: target.url, method: 'POST', headers: form, body: target.body, seconds: s });
  await run(meridianTarget, 2);
  await run(baseline, 2);
  // Interleaved, twice, so that a burst of other load on the machine hits both alike.
  const results = {
    ours: [] as Awaited<ReturnType<typeof run>>[],
    theirs: [] as Awaited<ReturnType<typeof run>>[],
    bare: [] as Awaited<ReturnType<typeof run>>[],
  };
  for (let round = 0; round < 2; round++) {
    results.ours.push(await run(meridianTarget, seconds / 2));
    results.theirs.push(await run(baseline, seconds / 2));
    results.bare.push(await run(ceiling, seconds / 2));
  }
  const mean = (list: { perSecond: number }[]) => list.reduce((sum, r) => sum + r.perSecond, 0) / list.length;
  const ours = {
    ...results.ours[1]!,
    perSecond: mean(results.ours),
    non2xx: results.ours.reduce((n, r) => n + r.non2xx, 0),
  };
  const theirs = {
    ...results.theirs[1]!,
    perSecond: mean(results.theirs),
    non2xx: results.theirs.reduce((n, r) => n + r.non2xx, 0),
  };

  console.log(
    `client credentials token issuance, ${seconds} s each (two interleaved rounds), 32 connections (autocannon)`,
  );
  console.log(
    `  Meridian        ${rate(ours.perSecond)}  (p99 ${ours.p99Ms} ms, non-2xx ${ours.non2xx}, errors ${ours.errors})`,
  );
  console.log(
    `  oidc-provider   ${rate(theirs.perSecond)}  (p99 ${theirs.p99Ms} ms, non-2xx ${theirs.non2xx}, errors ${theirs.errors})`,
  );
  const bare = mean(results.bare);
  console.log(
    `  bare Fastify    ${rate(bare)}  (constant answer: the ceiling, ${(bare / theirs.perSecond).toFixed(2)}x oidc-provider)`,
  );
  console.log(`  ratio           ${(ours.perSecond / theirs.perSecond).toFixed(2)}x (target >= 3x)`);
  console.log(`  share of ceiling ${((ours.perSecond / bare) * 100).toFixed(0)}%`);
  await ceiling.close();
  await baseline.close();
  await meridian.close();
}

await main();
