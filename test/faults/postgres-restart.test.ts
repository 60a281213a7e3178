import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { testDialects } from '../helpers/dialects.js';
import { type PrivatePostgres, startPrivatePostgres } from '../helpers/private-postgres.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';

/**
 * PostgreSQL restarted under write load: while it is down, requests fail with 503 in the documented
 * shape (never 500); nothing answered 2xx is lost; service resumes by itself.
 */
/** Runs the machine's PostgreSQL binaries as the postgres user: needs root (CI runs as root). */
const skip = !testDialects().includes('postgres')
  ? 'PostgreSQL is not among MERIDIAN_TEST_DIALECTS'
  : process.getuid?.() !== 0 && !process.env.CI
    ? 'needs root to run a private PostgreSQL as the postgres user'
    : false;

describe('PostgreSQL restart under load [postgres]', { skip }, () => {
  let postgres: PrivatePostgres;
  let server: TestServer;

  before(async () => {
    postgres = await startPrivatePostgres();
    server = await startTestServer('postgres', { pgAdminUrl: postgres.adminUrl });
  });
  after(async () => {
    await server?.close().catch(() => {});
    postgres?.destroy();
  });

  it('answers 503 while the database is down, loses nothing acknowledged, and resumes by itself', async () => {
    const acknowledged: string[] = [];
    const statuses = new Map<number, number>();
    const unavailableBodies: unknown[] = [];
    let phase: 'before' | 'down' | 'after' = 'before';
    let okAfterRestart = 0;
    let stop = false;
    let n = 0;

    const writer = async () => {
      while (!stop) {
        const email = `load${++n}@example.com`;
        const res = await server.admin.post('/api/v1/admin/users', {
          email,
          displayName: 'Load',
          password: 'load-password-123',
        });
        statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
        if (res.status === 201) {
          acknowledged.push(email);
          if (phase === 'after') okAfterRestart++;
        } else if (res.status === 503) {
          unavailableBodies.push(res.body);
          assert.ok(res.headers.get('retry-after'), 'a 503 says when to retry');
          await new Promise((r) => setTimeout(r, 50));
        }
      }
    };
    const writers = Array.from({ length: 8 }, writer);

    const waitUntil = async (condition: () => boolean) => {
      while (!condition()) await new Promise((r) => setTimeout(r, 20));
    };
    await waitUntil(() => acknowledged.length >= 20);
    phase = 'down';
    postgres.stop();
    await waitUntil(() => unavailableBodies.length >= 10);
    postgres.start();
    phase = 'after';
    await waitUntil(() => okAfterRestart >= 20);
    stop = true;
    await Promise.all(writers);

    assert.deepEqual(
      [...statuses.keys()].sort(),
      [201, 503],
      `only 201 and 503 were answered: ${JSON.stringify([...statuses])}`,
    );
    for (const body of unavailableBodies) {
      assert.equal((body as { error: string }).error, 'unavailable');
      assert.equal(typeof (body as { message: string }).message, 'string');
    }
    const stored = await server.storage.db
      .selectFrom('users')
      .select('email')
      .where('email', 'like', 'load%')
      .execute();
    const storedEmails = new Set(stored.map((r) => r.email));
    const lost = acknowledged.filter((email) => !storedEmails.has(email));
    assert.deepEqual(lost, [], 'every acknowledged write survived the restart');
    assert.equal((await server.client.get('/readyz')).status, 200);
  });
});
