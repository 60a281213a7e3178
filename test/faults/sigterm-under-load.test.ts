import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createTestDatabase, type TestDatabase, testDialects } from '../helpers/dialects.js';
import { freePort } from '../helpers/free-port.js';
import { TestClient } from '../helpers/http-client.js';
import { type MeridianProcess, runMeridian, serveEnv } from '../helpers/process.js';
import { missingFromHistory, startPublishLoad } from '../helpers/publish-load.js';
import { waitUntil } from '../helpers/wait.js';
import { createPat } from '../uns/uns-helpers.js';

const ADMIN_EMAIL = 'admin@sigterm.test';
const ADMIN_PASSWORD = 'sigterm-admin-password';
const SHUTDOWN_TIMEOUT_S = 20;

/** The exit code, or a failure when the process is still running after `ms`. */
async function exitWithin(meridian: MeridianProcess, ms: number): Promise<number | null> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`the process did not exit within ${ms} ms`)), ms);
  });
  return Promise.race([meridian.exited, late]).finally(() => clearTimeout(timer));
}

/**
 * SIGTERM to the real process in the middle of HTTP publish load: requests in flight finish, later ones
 * are refused cleanly (no connection, or 503 in the documented shape), no response is ever cut short,
 * the process exits 0 before its shutdown timeout, and after a restart on the same database every value
 * answered 200 is in history.
 */
for (const dialect of testDialects()) {
  describe(`SIGTERM under publish load [${dialect}]`, () => {
    let database: TestDatabase;
    const started: MeridianProcess[] = [];

    const serve = async () => {
      const port = await freePort();
      const meridian = runMeridian(['serve'], {
        ...serveEnv(database, port, { email: ADMIN_EMAIL, password: ADMIN_PASSWORD }),
        MERIDIAN_SHUTDOWN_TIMEOUT: String(SHUTDOWN_TIMEOUT_S),
      });
      started.push(meridian);
      await meridian.waitFor(/Meridian ready/, 60_000);
      return { meridian, url: `http://127.0.0.1:${port}` };
    };

    before(async () => {
      database = await createTestDatabase(dialect);
    });
    after(async () => {
      for (const meridian of started) if (meridian.child.exitCode === null) meridian.child.kill('SIGKILL');
      await Promise.all(started.map((meridian) => meridian.exited));
      await database?.drop();
    });

    it('finishes in-flight requests, refuses later ones cleanly, exits 0, and loses no acknowledged value', {
      timeout: 240_000,
    }, async (t) => {
      const first = await serve();
      const orgId = /organization id: +(\S+)/.exec(first.meridian.output())?.[1];
      assert.ok(orgId, 'the first start prints the organization id');
      const session = await new TestClient(first.url).login(ADMIN_EMAIL, ADMIN_PASSWORD, orgId);
      const token = await createPat(session, ['uns:publish', 'uns:read']);

      const load = startPublishLoad({
        baseUrl: first.url,
        token,
        org: orgId,
        topicBase: 'v1/sigterm/line',
        publishers: 8,
        batchSize: 500,
      });
      let signalledAt = 0;
      let drainMs = 0;
      let exitCode: number | null;
      try {
        await load.waitForAcknowledged(2_000);
        signalledAt = Date.now();
        first.meridian.child.kill('SIGTERM');
        exitCode = await exitWithin(first.meridian, (SHUTDOWN_TIMEOUT_S + 10) * 1000);
        drainMs = Date.now() - signalledAt;
      } finally {
        await load.stop();
      }
      assert.equal(
        exitCode,
        0,
        `exit code 0 (a timed-out shutdown exits 1); output:\n${first.meridian.output()}`,
      );
      assert.match(first.meridian.output(), /shutting down: finishing in-flight requests/);

      const truncated = load.outcomes.filter((o) => o.kind === 'truncated');
      assert.deepEqual(truncated, [], 'no response was cut short');
      const beforeSignal = load.outcomes.filter((o) => o.endedAt < signalledAt);
      assert.ok(
        beforeSignal.every((o) => o.kind === 'answered' && o.status === 200),
        'every request that ended before SIGTERM was answered 200',
      );
      const answered = load.outcomes.filter((o) => o.kind === 'answered');
      const statuses = new Set(answered.map((o) => o.status));
      assert.ok(
        [...statuses].every((s) => s === 200 || s === 503),
        `only 200 and 503: ${[...statuses]}`,
      );
      const unavailable = answered.filter((o) => o.status === 503);
      for (const o of unavailable) {
        assert.deepEqual(Object.keys(o.body as object).sort(), ['error', 'message']);
        assert.equal((o.body as { error: string }).error, 'unavailable');
        assert.ok(Number(o.retryAfter) >= 1, 'a 503 says when to retry');
      }
      const drained = answered.filter(
        (o) => o.status === 200 && o.startedAt < signalledAt && o.endedAt >= signalledAt,
      );
      assert.ok(drained.length > 0, 'requests in flight at SIGTERM were answered 200');
      const refused = load.outcomes.filter((o) => o.kind === 'no-response').length;
      t.diagnostic(
        `${load.acknowledged.length} values acknowledged; after SIGTERM: ${drained.length} in-flight requests ` +
          `answered 200, ${unavailable.length} answered 503, ${refused} got no connection; exit 0 after ${drainMs} ms`,
      );

      const second = await serve();
      const api = new TestClient(second.url).as({ token, org: orgId });
      await waitUntil('the restarted server is ready', async () =>
        (await api.get('/readyz')).status === 200 ? true : null,
      );
      assert.deepEqual(
        await missingFromHistory(api, load.acknowledged),
        [],
        'every value answered 200 is stored',
      );
      second.meridian.child.kill('SIGTERM');
      assert.equal(await second.meridian.exited, 0);
    });
  });
}
