import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { createTestDatabase, type TestDatabase, testDialects } from '../../../test/helpers/dialects.js';
import type { AccessDirectory } from '../../platform/access-control.js';
import { createLocalInvalidationBus, type InvalidationBus } from '../../platform/invalidation-bus.js';
import { openStorage, type Storage } from '../../storage/database.js';
import { migrateToLatest } from '../../storage/migrator.js';
import { createAccessDirectory, STANDING_TOPICS } from './access-directory.js';

for (const dialect of testDialects()) {
  describe(`access directory, cached standing [${dialect}]`, () => {
    let database: TestDatabase;
    let storage: Storage;
    let bus: InvalidationBus;
    let directory: AccessDirectory;
    let userId: string;
    let orgId: string;

    before(async () => {
      database = await createTestDatabase(dialect);
      storage = openStorage({ databaseUrl: database.databaseUrl, dataDir: database.dataDir });
      await migrateToLatest(storage);
    });
    after(async () => {
      await storage?.close();
      await database?.drop();
    });

    /** A fresh directory (empty cache) and a fresh user who is a Viewer of a fresh organization. */
    async function setUp() {
      bus = createLocalInvalidationBus();
      directory = createAccessDirectory(storage.db, bus);
      userId = randomUUID();
      orgId = randomUUID();
      const now = Date.now();
      const audit = { created_at: now, created_by: null, updated_at: now, updated_by: null };
      await storage.db
        .insertInto('users')
        .values({
          id: userId,
          email: `${userId}@example.com`,
          email_normalized: `${userId}@example.com`,
          display_name: 'Cached',
          password_hash: 'x',
          status: 'active',
          is_system_admin: 0,
          deleted_at: null,
          last_login_at: null,
          ...audit,
        })
        .execute();
      await storage.db
        .insertInto('organizations')
        .values({ id: orgId, name: 'Cached', status: 'active', ...audit })
        .execute();
      await storage.db
        .insertInto('memberships')
        .values({ user_id: userId, organization_id: orgId, role: 'Viewer', created_at: now, updated_at: now })
        .execute();
    }

    it('has nothing cached before the first read, and the read standing after it', async () => {
      await setUp();
      assert.equal(directory.cachedStanding?.(userId, orgId), undefined);
      const standing = await directory.standing(userId, orgId);
      assert.deepEqual(standing, {
        userActive: true,
        isSystemAdmin: false,
        organization: { id: orgId, role: 'Viewer' },
      });
      assert.equal(directory.cachedStanding?.(userId, orgId), standing);
      assert.equal(directory.cachedStanding?.(userId, null), undefined);
      assert.equal(directory.cachedStanding?.(userId, orgId.toUpperCase()), undefined);
    });

    const events: [string, () => { topic: string; id: string }][] = [
      ['user', () => ({ topic: STANDING_TOPICS.user, id: userId })],
      ['organization', () => ({ topic: STANDING_TOPICS.organization, id: orgId })],
      ['membership', () => ({ topic: STANDING_TOPICS.membership, id: `${userId}|${orgId}` })],
      ['everything', () => ({ topic: '*', id: '' })],
    ];
    for (const [name, event] of events) {
      it(`forgets a cached standing on a ${name} change`, async () => {
        await setUp();
        await directory.standing(userId, orgId);
        await storage.db
          .updateTable('users')
          .set({ status: 'deactivated' })
          .where('id', '=', userId)
          .execute();
        await bus.publish(event());
        assert.equal(directory.cachedStanding?.(userId, orgId), undefined);
        assert.equal((await directory.standing(userId, orgId))?.userActive, false);
      });
    }

    it('keeps the standing of other users and organizations on a change', async () => {
      await setUp();
      await directory.standing(userId, orgId);
      await bus.publish({ topic: STANDING_TOPICS.user, id: randomUUID() });
      await bus.publish({ topic: STANDING_TOPICS.membership, id: `${userId}|${randomUUID()}` });
      assert.notEqual(directory.cachedStanding?.(userId, orgId), undefined);
    });

    it('forgets every standing a change concerns, and only those', async () => {
      await setUp();
      const otherOrg = randomUUID();
      await directory.standing(userId, orgId);
      await directory.standing(userId, null);
      await directory.standing(userId, otherOrg);
      const cached = (organizationId: string | null) => directory.cachedStanding?.(userId, organizationId);
      await bus.publish({ topic: STANDING_TOPICS.membership, id: `${userId}|${otherOrg}` });
      assert.equal(cached(otherOrg), undefined);
      assert.notEqual(cached(orgId), undefined);
      await bus.publish({ topic: STANDING_TOPICS.organization, id: orgId });
      assert.equal(cached(orgId), undefined);
      assert.notEqual(cached(null), undefined);
      await directory.standing(userId, orgId);
      await directory.standing(userId, otherOrg);
      await bus.publish({ topic: STANDING_TOPICS.user, id: userId });
      for (const organizationId of [orgId, otherOrg, null]) assert.equal(cached(organizationId), undefined);
    });

    it('forgets a cached standing after its time to live', async (t) => {
      await setUp();
      t.mock.timers.enable({ apis: ['Date'], now: Date.now() });
      await directory.standing(userId, orgId);
      t.mock.timers.tick(4_999);
      assert.notEqual(directory.cachedStanding?.(userId, orgId), undefined);
      t.mock.timers.tick(1);
      assert.equal(directory.cachedStanding?.(userId, orgId), undefined);
    });

    it('caches nothing without a bus to evict it', async () => {
      await setUp();
      const uncached = createAccessDirectory(storage.db);
      await uncached.standing(userId, orgId);
      assert.equal(uncached.cachedStanding, undefined);
    });
  });
}
