import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { testDialects } from '../helpers/dialects.js';
import type { TestClient } from '../helpers/http-client.js';
import { CLUSTER_ADMIN_PASSWORD, type ReplicaCluster, startReplicaCluster } from './replica-cluster.js';

const EMAIL = 'locked-out@example.com';
const FIRST = 'first-password-for-lockout';

/**
 * Issue 40 point 3: each replica counts failed sign-ins in its own memory; a password reset (the CLI's,
 * run against the shared database, or an administrator's) is in the database, and lifts the lock on every
 * replica at the next attempt.
 */
describe('a sign-in lockout lifted by a password reset on every replica [postgres]', {
  skip: !testDialects().includes('postgres'),
}, () => {
  let cluster: ReplicaCluster;
  let admin: TestClient;
  let userId: string;

  before(async () => {
    cluster = await startReplicaCluster(2);
    admin = await cluster.replicas[0]!.client.login('admin@localhost', CLUSTER_ADMIN_PASSWORD);
    const created = await admin.post('/api/v1/admin/users', {
      email: EMAIL,
      displayName: 'Locked',
      password: FIRST,
    });
    assert.equal(created.status, 201, created.text);
    userId = created.body.data.id;
  });
  after(() => cluster?.stop());

  const signIn = (replica: number, password: string) =>
    cluster.replicas[replica]!.client.post('/api/v1/auth/login', { email: EMAIL, password });

  const lockOutEverywhere = async (password: string) => {
    for (const replica of [0, 1]) {
      for (let i = 0; i < 5; i++) assert.equal((await signIn(replica, `wrong-${i}`)).status, 401);
      const locked = await signIn(replica, password);
      assert.equal(locked.status, 429, locked.text);
      assert.match(locked.body.message, /^too many failed sign-in attempts; try again in 15 minutes$/);
      assert.equal(locked.headers.get('retry-after'), '900');
    }
  };

  it('`meridian admin reset-password` lifts the lock on both replicas', async () => {
    await lockOutEverywhere(FIRST);
    const next = 'second-password-after-cli';
    const reset = cluster.run(['admin', 'reset-password', '--email', EMAIL, '--password', next]);
    assert.equal(await reset.exited, 0, reset.output());
    for (const replica of [0, 1])
      assert.equal((await signIn(replica, next)).status, 200, `replica ${replica}`);
  });

  it("an administrator's reset on one replica lifts the lock on the other", async () => {
    await lockOutEverywhere('second-password-after-cli');
    const third = 'third-password-from-admin';
    const reset = await admin.patch(`/api/v1/admin/users/${userId}`, { password: third });
    assert.equal(reset.status, 200, reset.text);
    for (const replica of [1, 0])
      assert.equal((await signIn(replica, third)).status, 200, `replica ${replica}`);
  });
});
