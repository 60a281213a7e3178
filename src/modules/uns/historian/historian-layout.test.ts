import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { createTestDatabase, type TestDatabase } from '../../../../test/helpers/dialects.js';
import { openStorage, type Storage } from '../../../storage/database.js';
import { migrateToLatest } from '../../../storage/migrator.js';
import { openHistorian } from './historian-layout.js';

const tablesIn = async (storage: Storage, schema: 'main' | 'historian') =>
  (
    await sql<{
      name: string;
    }>`select name from ${sql.raw(schema)}.sqlite_master where type = 'table'`.execute(storage.db)
  ).rows
    .map((r) => r.name)
    .filter((name) => name.startsWith('uns_'))
    .sort();

// A database written before latest values moved into the historian file keeps them across the upgrade.
describe('SQLite historian file', () => {
  let database: TestDatabase;
  let storage: Storage;

  before(async () => {
    database = await createTestDatabase('sqlite');
    storage = openStorage({ dataDir: database.dataDir });
    await migrateToLatest(storage);
  });
  after(async () => {
    await storage?.close();
    await database?.drop();
  });

  it('holds history and latest values; latest values written in meridian.db move over once', async () => {
    assert.ok((await tablesIn(storage, 'main')).includes('uns_latest'), 'migration 0003 creates it in main');
    const rows = [
      {
        topic_id: 1,
        ts_us: 10,
        value_json: '1.5',
        value_num: 1.5,
        quality: 0,
        source: null,
        received_us: 11,
      },
      {
        topic_id: 2,
        ts_us: 20,
        value_json: '"on"',
        value_num: null,
        quality: 2,
        source: 'plc',
        received_us: 21,
      },
    ];
    await storage.db.insertInto('uns_latest').values(rows).execute();

    await openHistorian(storage);
    // Rollups are derived and rebuilt on demand (rollups/rollups.ts): they, their coverage and the late
    // values noted for the rollup job stay in meridian.db.
    assert.deepEqual(await tablesIn(storage, 'main'), [
      'uns_rollup_coverage',
      'uns_rollup_late',
      'uns_rollups',
      'uns_schema_bindings',
      'uns_schemas',
      'uns_settings',
      'uns_topics',
      'uns_violations',
    ]);
    assert.deepEqual(await tablesIn(storage, 'historian'), [
      'uns_latest',
      'uns_segments',
      'uns_values',
      'uns_values_staged',
    ]);
    const moved = await storage.db.selectFrom('uns_latest').selectAll().orderBy('topic_id').execute();
    assert.deepEqual(moved, rows, 'every column of every row, now read from the historian file');

    // Opening again (every start) changes nothing.
    await openHistorian(storage);
    assert.deepEqual(
      await storage.db.selectFrom('uns_latest').selectAll().orderBy('topic_id').execute(),
      rows,
    );
  });
});
