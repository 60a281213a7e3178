import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { testDialects } from '../helpers/dialects.js';
import { type BuiltUser, buildUser } from '../helpers/factories.js';
import { type Answer, requestFrom } from '../helpers/request-from.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';
import { type RegisteredClient, registerClient } from '../oauth2/oauth2-helpers.js';

const LOGIN_MAX_FAILURES = 5;
const TOKEN_LIMIT_PER_CLIENT = 20;
const TOKEN_LIMIT_PER_ADDRESS = 50;
const CONFIG = {
  loginMaxFailures: LOGIN_MAX_FAILURES,
  loginWindow: 600,
  tokenRateLimitPerClient: TOKEN_LIMIT_PER_CLIENT,
  tokenRateLimitPerAddress: TOKEN_LIMIT_PER_ADDRESS,
};

const login = (server: TestServer, from: string, email: string, password: string, forwardedFor?: string) =>
  requestFrom(from, `${server.url}/api/v1/auth/login`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      ...(forwardedFor ? { 'x-forwarded-for': forwardedFor } : {}),
    },
    body: JSON.stringify({ email, password }),
  });

const token = (server: TestServer, from: string, clientId: string, clientSecret: string) =>
  requestFrom(from, `${server.url}/api/v1/oauth2/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      grant_type: 'client_credentials',
      client_id: clientId,
      client_secret: clientSecret,
    }).toString(),
  });

/**
 * Sends every request at once and, while they are in flight, checks that the server still answers
 * `/healthz` from an address of its own. Resolves with every answer.
 */
async function flood(server: TestServer, requests: (() => Promise<Answer>)[]): Promise<Answer[]> {
  const answers = Promise.all(requests.map((send) => send()));
  const health = await requestFrom('127.0.0.99', `${server.url}/healthz`);
  assert.equal(health.status, 200, 'the server answers /healthz during the flood');
  return answers;
}

/** Statuses counted per client address: `{ "127.0.0.11": { 401: 5, 429: 45 } }`. */
function statusesByAddress(answers: Answer[]): Record<string, Record<number, number>> {
  const counts: Record<string, Record<number, number>> = {};
  for (const { from, status } of answers) {
    const byStatus = counts[from] ?? {};
    byStatus[status] = (byStatus[status] ?? 0) + 1;
    counts[from] = byStatus;
  }
  return counts;
}

function assertRateLimited(answer: Answer, bodyKeys: string[]): void {
  assert.equal(answer.status, 429);
  assert.deepEqual(Object.keys(answer.body).sort(), bodyKeys);
  assert.equal(answer.body.error, 'rate_limited');
  const retryAfter = Number(answer.headers['retry-after']);
  assert.ok(Number.isInteger(retryAfter) && retryAfter >= 1, `Retry-After is whole seconds: ${retryAfter}`);
}

/**
 * Rate limits hold under concurrent attack: 200 requests at once, from several real client addresses,
 * evaluate no more than the configured number of failures before 429 (a check that counts failures only
 * after the slow password check would let every concurrent attempt through), answer 429 in the
 * documented shape with Retry-After, leave legitimate clients elsewhere unaffected, and keep the server
 * answering.
 */
for (const dialect of testDialects()) {
  describe(`rate limits under concurrent attack [${dialect}]`, () => {
    let server: TestServer;

    before(async () => {
      server = await startTestServer(dialect, { config: CONFIG });
    });
    after(() => server?.close());

    describe('console sign-in', () => {
      let victim: BuiltUser;
      before(async () => {
        victim = await buildUser(server);
      });

      it('evaluates at most MERIDIAN_LOGIN_MAX_FAILURES wrong passwords per account and address, then 429; the account still signs in from another address', async () => {
        const attackers = ['127.0.0.11', '127.0.0.12', '127.0.0.13', '127.0.0.14'];
        const answers = await flood(
          server,
          attackers.flatMap((from) =>
            Array.from({ length: 50 }, () => () => login(server, from, victim.email, 'wrong-password!')),
          ),
        );
        const expected = { 401: LOGIN_MAX_FAILURES, 429: 50 - LOGIN_MAX_FAILURES };
        assert.deepEqual(statusesByAddress(answers), Object.fromEntries(attackers.map((a) => [a, expected])));
        for (const answer of answers) {
          if (answer.status === 401) assert.deepEqual(Object.keys(answer.body), ['message']);
          else assertRateLimited(answer, ['error', 'message']);
        }
        assert.equal((await login(server, '127.0.0.20', victim.email, victim.password)).status, 200);
        assert.equal(
          (await login(server, attackers[0]!, victim.email, victim.password)).status,
          429,
          'even the right password waits where the limit was reached',
        );
      });

      it('stops an address spraying one password over many accounts after ten times that limit', async () => {
        const sprayer = '127.0.0.15';
        const answers = await flood(
          server,
          Array.from(
            { length: 200 },
            (_, i) => () => login(server, sprayer, `spray${i}@example.com`, 'Winter2026!'),
          ),
        );
        const limit = 10 * LOGIN_MAX_FAILURES;
        assert.deepEqual(statusesByAddress(answers), { [sprayer]: { 401: limit, 429: 200 - limit } });
        for (const answer of answers.filter((a) => a.status === 429))
          assertRateLimited(answer, ['error', 'message']);
        assert.equal((await login(server, '127.0.0.21', victim.email, victim.password)).status, 200);
      });

      it('ignores X-Forwarded-For without MERIDIAN_TRUST_PROXY: rotating it escapes no limit', async () => {
        const user = await buildUser(server);
        const answers = await flood(
          server,
          Array.from(
            { length: 50 },
            (_, i) => () => login(server, '127.0.0.16', user.email, 'wrong-password!', `203.0.113.${i}`),
          ),
        );
        assert.deepEqual(statusesByAddress(answers), {
          '127.0.0.16': { 401: LOGIN_MAX_FAILURES, 429: 50 - LOGIN_MAX_FAILURES },
        });
      });
    });

    describe('token endpoint', () => {
      let target: RegisteredClient;
      let bystander: RegisteredClient;
      let spare: RegisteredClient;
      before(async () => {
        target = await registerClient(server, { grantTypes: ['client_credentials'], redirectUris: [] });
        bystander = await registerClient(server, { grantTypes: ['client_credentials'], redirectUris: [] });
        spare = await registerClient(server, { grantTypes: ['client_credentials'], redirectUris: [] });
      });

      it('wrong secrets naming a client are limited per address and never lock the client itself out', async () => {
        const attackers = ['127.0.0.31', '127.0.0.32', '127.0.0.33', '127.0.0.34'];
        const answers = await flood(
          server,
          attackers.flatMap((from) =>
            Array.from(
              { length: 60 },
              () => () => token(server, from, target.clientId, 'mrd_cs_wrong-secret'),
            ),
          ),
        );
        assert.deepEqual(
          statusesByAddress(answers),
          Object.fromEntries(
            attackers.map((a) => [a, { 401: TOKEN_LIMIT_PER_ADDRESS, 429: 60 - TOKEN_LIMIT_PER_ADDRESS }]),
          ),
        );
        for (const answer of answers) {
          if (answer.status === 401) {
            assert.equal(answer.body.error, 'invalid_client');
            continue;
          }
          assertRateLimited(answer, ['error', 'error_description']);
          assert.equal(typeof answer.body.error_description, 'string');
          assert.equal(answer.headers['cache-control'], 'no-store');
        }
        const own = await token(server, '127.0.0.40', target.clientId, target.clientSecret!);
        assert.equal(own.status, 200, 'the attacked client still gets tokens');
        assert.equal(own.body.token_type, 'bearer');
      });

      it("limits a client's own authenticated requests at MERIDIAN_TOKEN_RATE_LIMIT_PER_CLIENT, from any address", async () => {
        const answers = await flood(
          server,
          Array.from(
            { length: 40 },
            (_, i) => () =>
              token(server, `127.0.0.${50 + (i % 4)}`, bystander.clientId, bystander.clientSecret!),
          ),
        );
        const statuses = answers.map((a) => a.status);
        assert.equal(statuses.filter((s) => s === 200).length, TOKEN_LIMIT_PER_CLIENT);
        assert.equal(statuses.filter((s) => s === 429).length, 40 - TOKEN_LIMIT_PER_CLIENT);
        for (const answer of answers.filter((a) => a.status === 429))
          assertRateLimited(answer, ['error', 'error_description']);
        const other = await token(server, '127.0.0.42', target.clientId, target.clientSecret!);
        assert.equal(other.status, 200, 'another client is not affected');
      });

      it('counts a public client per client and address: one address cannot lock out its other users', async () => {
        const app = await registerClient(server, {
          clientType: 'public',
          grantTypes: ['authorization_code', 'refresh_token'],
        });
        const refresh = (from: string) =>
          requestFrom(from, `${server.url}/api/v1/oauth2/token`, {
            method: 'POST',
            headers: { 'content-type': 'application/x-www-form-urlencoded' },
            body: new URLSearchParams({
              grant_type: 'refresh_token',
              client_id: app.clientId,
              refresh_token: `mrd_rt_${randomBytes(16).toString('hex')}`,
            }).toString(),
          });
        const attacker = '127.0.0.36';
        const answers = await flood(
          server,
          Array.from({ length: 40 }, () => () => refresh(attacker)),
        );
        assert.deepEqual(statusesByAddress(answers), {
          [attacker]: { 400: TOKEN_LIMIT_PER_CLIENT, 429: 40 - TOKEN_LIMIT_PER_CLIENT },
        });
        for (const answer of answers.filter((a) => a.status === 429))
          assertRateLimited(answer, ['error', 'error_description']);
        const user = await refresh('127.0.0.37');
        assert.equal(user.status, 400, 'a user of the client elsewhere is answered, not rate limited');
        assert.equal(user.body.error, 'invalid_grant');
      });

      it('evaluates at most MERIDIAN_TOKEN_RATE_LIMIT_PER_ADDRESS requests from an address that names a new client each time', async () => {
        const sprayer = '127.0.0.35';
        const answers = await flood(
          server,
          Array.from(
            { length: 200 },
            () => () => token(server, sprayer, `mrd_ci_${randomBytes(8).toString('hex')}`, 'mrd_cs_guess'),
          ),
        );
        assert.deepEqual(statusesByAddress(answers), {
          [sprayer]: { 401: TOKEN_LIMIT_PER_ADDRESS, 429: 200 - TOKEN_LIMIT_PER_ADDRESS },
        });
        for (const answer of answers.filter((a) => a.status === 429))
          assertRateLimited(answer, ['error', 'error_description']);
        const legitimate = await token(server, '127.0.0.41', spare.clientId, spare.clientSecret!);
        assert.equal(legitimate.status, 200);
      });
    });
  });

  describe(`rate limits behind a load balancer (MERIDIAN_TRUST_PROXY) [${dialect}]`, () => {
    let server: TestServer;
    before(async () => {
      // One load balancer in front: it appends the address it saw, so only the last entry is believed.
      server = await startTestServer(dialect, { config: { ...CONFIG, trustProxy: 1 } });
    });
    after(() => server?.close());

    it('believes only the hop the load balancer appended: a forged X-Forwarded-For escapes no sign-in limit', async () => {
      const user = await buildUser(server);
      const answers = await flood(
        server,
        Array.from(
          { length: 50 },
          (_, i) => () =>
            login(server, '127.0.0.50', user.email, 'wrong-password!', `203.0.113.${i}, 198.51.100.7`),
        ),
      );
      for (const answer of answers) answer.from = '198.51.100.7';
      assert.deepEqual(statusesByAddress(answers), {
        '198.51.100.7': { 401: LOGIN_MAX_FAILURES, 429: 50 - LOGIN_MAX_FAILURES },
      });
    });

    it('a forged X-Forwarded-For escapes no token endpoint limit', async () => {
      const answers = await flood(
        server,
        Array.from(
          { length: 80 },
          (_, i) => () =>
            requestFrom('127.0.0.50', `${server.url}/api/v1/oauth2/token`, {
              method: 'POST',
              headers: {
                'content-type': 'application/x-www-form-urlencoded',
                'x-forwarded-for': `203.0.113.${i}, 198.51.100.8`,
              },
              body: new URLSearchParams({
                grant_type: 'client_credentials',
                client_id: `mrd_ci_${randomBytes(8).toString('hex')}`,
                client_secret: 'mrd_cs_guess',
              }).toString(),
            }),
        ),
      );
      const statuses = answers.map((a) => a.status);
      assert.equal(statuses.filter((s) => s === 401).length, TOKEN_LIMIT_PER_ADDRESS);
      assert.equal(statuses.filter((s) => s === 429).length, 80 - TOKEN_LIMIT_PER_ADDRESS);
    });

    it('keys the sign-in limit on the forwarded client address', async () => {
      const victim = await buildUser(server);
      const clients = ['198.51.100.1', '198.51.100.2', '198.51.100.3', '198.51.100.4'];
      const answers = await flood(
        server,
        clients.flatMap((client) =>
          Array.from({ length: 50 }, () => async () => ({
            ...(await login(server, '127.0.0.50', victim.email, 'wrong-password!', client)),
            from: client,
          })),
        ),
      );
      const expected = { 401: LOGIN_MAX_FAILURES, 429: 50 - LOGIN_MAX_FAILURES };
      assert.deepEqual(statusesByAddress(answers), Object.fromEntries(clients.map((c) => [c, expected])));
      const legitimate = await login(server, '127.0.0.50', victim.email, victim.password, '198.51.100.9');
      assert.equal(legitimate.status, 200, 'the same load balancer forwards a legitimate sign-in');
    });
  });

  describe(`rate limits behind trusted proxy addresses (MERIDIAN_TRUST_PROXY=<addresses>) [${dialect}]`, () => {
    let server: TestServer;
    before(async () => {
      server = await startTestServer(dialect, { config: { ...CONFIG, trustProxy: ['127.0.0.50/32'] } });
    });
    after(() => server?.close());

    it('believes X-Forwarded-For from a listed proxy and ignores it from anyone else', async () => {
      const user = await buildUser(server);
      const direct = await flood(
        server,
        Array.from(
          { length: 30 },
          (_, i) => () => login(server, '127.0.0.60', user.email, 'wrong-password!', `203.0.113.${i}`),
        ),
      );
      assert.deepEqual(statusesByAddress(direct), {
        '127.0.0.60': { 401: LOGIN_MAX_FAILURES, 429: 30 - LOGIN_MAX_FAILURES },
      });
      const viaProxy = await login(server, '127.0.0.50', user.email, user.password, '198.51.100.20');
      assert.equal(viaProxy.status, 200, 'a client behind the trusted proxy has its own address');
    });
  });
}
