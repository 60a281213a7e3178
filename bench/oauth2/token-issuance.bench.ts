/**
 * Client-credentials token issuance per second: Meridian against panva's oidc-provider configured for
 * the same grant with JWT (ES256) access tokens, both started here, driven by the same wrk settings, one
 * after the other. Target: Meridian at least 3.5x (issue 45). Each server's CPU a token (all its threads) is
 * printed beside its rate: on a loaded machine it is the steadier figure. Each server runs in a process of its own
 * (bench/oauth2/token-servers.ts), as each would in production. The load generator is wrk (bench/wrk.ts):
 * on a two-core machine every cycle it spends is taken from the server it measures, and it spends far
 * fewer than autocannon, which made Meridian (two busy threads) pay more than oidc-provider (one).
 *
 * Run: npx tsx bench/oauth2/token-issuance.bench.ts [seconds]
 */
import { loadavg } from 'node:os';
import { createLocalJWKSet, type JSONWebKeySet, jwtVerify } from 'jose';
import { processCpuMs } from '../uns/cpu-meter.js';
import { combineWrkResults, requireWrk, type WrkResult, wrk } from '../wrk.js';
import { rate } from './load.js';
import { spawnTokenServer, type TokenServer } from './token-servers.js';

// Before anything starts: without wrk there is nothing to measure.
requireWrk();

const seconds = Number(process.argv[2] ?? 10);
const form = { 'content-type': 'application/x-www-form-urlencoded' };

async function main() {
  // Each server in a process of its own; wrk is a process of its own too.
  const meridian = await spawnTokenServer('meridian');
  const baseline = await spawnTokenServer('oidc-provider');
  const ceiling = await spawnTokenServer('bare-fastify');
  // Both answer a real token before measuring.
  for (const target of [meridian, baseline]) {
    const res = await fetch(target.url, { method: 'POST', headers: form, body: target.body });
    const body = (await res.json()) as { access_token?: string };
    if (res.status !== 200 || !body.access_token?.startsWith('ey'))
      throw new Error(`${target.url}: ${res.status} ${JSON.stringify(body)}`);
  }
  // Meridian's token is a valid RFC 9068 JWT under its own JWKS, with the claims the spec names.
  const sample = (await (
    await fetch(meridian.url, { method: 'POST', headers: form, body: meridian.body })
  ).json()) as { access_token: string };
  const jwks = createLocalJWKSet(
    (await (await fetch(`${meridian.issuer}/.well-known/jwks.json`)).json()) as JSONWebKeySet,
  );
  const verified = await jwtVerify(sample.access_token, jwks, {
    algorithms: ['ES256'],
    typ: 'at+jwt',
    issuer: meridian.issuer,
    requiredClaims: ['iss', 'sub', 'client_id', 'scope', 'aud', 'iat', 'exp', 'jti'],
  });
  if (verified.payload.client_id !== meridian.clientId || verified.payload.scope !== 'uns:read')
    throw new Error(`unexpected claims ${JSON.stringify(verified.payload)}`);
  const run = (target: TokenServer, s: number) =>
    wrk({ url: target.url, method: 'POST', headers: form, body: target.body, seconds: s, connections: 32 });
  // Server CPU (every thread of its process: event loop, signing and audit threads, GC helpers) per token:
  // on a loaded machine it says more than the rate, which the other processes' load moves.
  const cpu = new Map<TokenServer, { ms: number; tokens: number }>();
  const measured = async (target: TokenServer & { pid: number }, s: number) => {
    const before = processCpuMs(String(target.pid));
    const result = await run(target, s);
    const used = cpu.get(target) ?? { ms: 0, tokens: 0 };
    used.ms += processCpuMs(String(target.pid)) - before;
    used.tokens += result.perSecond * s;
    cpu.set(target, used);
    return result;
  };
  const cpuPerToken = (target: TokenServer) => {
    const used = cpu.get(target);
    return used && used.tokens > 0
      ? `${Math.round((used.ms * 1000) / used.tokens)} µs CPU a token`
      : 'CPU n/a';
  };
  await run(meridian, 2);
  await run(baseline, 2);
  // Interleaved, twice, so that a burst of other load on the machine hits both alike.
  const rounds = { ours: [] as WrkResult[], theirs: [] as WrkResult[], bare: [] as WrkResult[] };
  for (let round = 0; round < 2; round++) {
    rounds.ours.push(await measured(meridian, seconds / 2));
    rounds.theirs.push(await measured(baseline, seconds / 2));
    rounds.bare.push(await run(ceiling, seconds / 2));
  }
  const ours = combineWrkResults(rounds.ours);
  const theirs = combineWrkResults(rounds.theirs);

  console.log(
    `client credentials token issuance, ${seconds} s each (two interleaved rounds; p99: the worse round), 32 connections (wrk, one thread)`,
  );
  console.log(
    `  Meridian        ${rate(ours.perSecond)}  (${cpuPerToken(meridian)}, p99 ${ours.p99Ms} ms, non-2xx ${ours.non2xx}, errors ${ours.errors})`,
  );
  console.log(
    `  oidc-provider   ${rate(theirs.perSecond)}  (${cpuPerToken(baseline)}, p99 ${theirs.p99Ms} ms, non-2xx ${theirs.non2xx}, errors ${theirs.errors})`,
  );
  const bare = combineWrkResults(rounds.bare).perSecond;
  console.log(
    `  bare Fastify    ${rate(bare)}  (constant answer: the ceiling, ${(bare / theirs.perSecond).toFixed(2)}x oidc-provider)`,
  );
  console.log(`  ratio           ${(ours.perSecond / theirs.perSecond).toFixed(2)}x (target >= 3.5x)`);
  console.log(
    `  load average    ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')} (ratios are results only on a quiet machine)`,
  );
  console.log(`  share of ceiling ${((ours.perSecond / bare) * 100).toFixed(0)}%`);
  await Promise.all([ceiling.stop(), baseline.stop(), meridian.stop()]);
}

await main();
