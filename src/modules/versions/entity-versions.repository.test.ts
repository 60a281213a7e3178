import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createTestDatabase, type TestDatabase, testDialects } from '../../../test/helpers/dialects.js';
import { openStorage, type Storage } from '../../storage/database.js';
import { migrateToLatest } from '../../storage/migrator.js';
import { EntityVersionsRepository } from './entity-versions.repository.js';

const actor = { userId: 'user-1', clientId: null };

for (const dialect of testDialects()) {
  describe(`entity versions [${dialect}]`, () => {
    let database: TestDatabase;
    let storage: Storage;
    let versions: EntityVersionsRepository;

    before(async () => {
      database = await createTestDatabase(dialect);
      storage = openStorage({ databaseUrl: database.databaseUrl, dataDir: database.dataDir });
      await migrateToLatest(storage);
      for (const id of ['org-a', 'org-b']) {
        await storage.db
          .insertInto('organizations')
          .values({
            id,
            name: id,
            status: 'active',
            created_at: 1,
            created_by: null,
            updated_at: 1,
            updated_by: null,
          })
          .execute();
      }
      versions = new EntityVersionsRepository(storage.db);
    });
    after(async () => {
      await storage?.close();
      await database?.drop();
    });

    const record = (
      version: number,
      snapshot: unknown,
      changeType: 'create' | 'update' | 'revert' = 'update',
    ) =>
      storage.db.transaction().execute((trx) =>
        versions.record(trx, {
          organizationId: 'org-a',
          entityType: 'model',
          entityId: 'm1',
          version,
          changeType,
          snapshot,
          actor,
          at: 1_700_000_000_000 + version,
        }),
      );

    it('records a create with an empty summary and an update with what changed against the previous version', async () => {
      assert.deepEqual(
        await record(1, { name: 'Pump', fields: [{ name: 'speed', type: 'number' }] }, 'create'),
        {
          added: [],
          removed: [],
          changed: [],
        },
      );
      const summary = await record(2, {
        name: 'Pump',
        fields: [
          { name: 'speed', type: 'integer' },
          { name: 'state', type: 'string' },
        ],
        unit: 'rpm',
      });
      assert.deepEqual(summary, { added: ['/fields/1', '/unit'], removed: [], changed: ['/fields/0'] });
      const stored = await versions.get('org-a', 'model', 'm1', 2);
      assert.equal(stored?.changeType, 'update');
      assert.equal(stored?.createdBy, 'user-1');
      assert.deepEqual(stored?.summary, summary);
      assert.ok(stored);
      assert.deepEqual((stored.snapshot as { unit: string }).unit, 'rpm');
    });

    it('refuses a second version with the same number (the history is append-only)', async () => {
      await assert.rejects(record(2, { name: 'again' }));
      const kept = await versions.get('org-a', 'model', 'm1', 2);
      assert.ok(kept);
      assert.equal((kept.snapshot as { name: string }).name, 'Pump');
    });

    it('lists newest first with paging and a total', async () => {
      for (let v = 3; v <= 7; v++) await record(v, { name: `Pump ${v}` });
      const page = await versions.list('org-a', 'model', 'm1', { limit: 3, offset: 1 });
      assert.deepEqual(
        page.rows.map((r) => r.version),
        [6, 5, 4],
      );
      assert.deepEqual(page.pagination, { total: 7, limit: 3, offset: 1 });
    });

    it('shows nothing of an entity to another organization', async () => {
      assert.equal(await versions.get('org-b', 'model', 'm1', 1), undefined);
      assert.equal((await versions.list('org-b', 'model', 'm1', {})).pagination.total, 0);
    });

    it('deletes the whole history of one entity only', async () => {
      await storage.db.transaction().execute((trx) =>
        versions.record(trx, {
          organizationId: 'org-a',
          entityType: 'dashboard',
          entityId: 'm1',
          version: 1,
          changeType: 'create',
          snapshot: {},
          actor,
          at: 1,
        }),
      );
      await storage.db.transaction().execute((trx) => versions.deleteAll(trx, 'org-a', 'model', 'm1'));
      assert.equal((await versions.list('org-a', 'model', 'm1', {})).pagination.total, 0);
      assert.equal((await versions.list('org-a', 'dashboard', 'm1', {})).pagination.total, 1);
    });
  });
}
