import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, beforeEach, describe, it } from 'node:test';
import SQLite from 'better-sqlite3';
import { sql } from 'kysely';
import { createTestDatabase, type TestDatabase } from '../../../test/helpers/dialects.js';
import { openStorage, type Storage } from '../database.js';

// Another connection to the same file plays the second writer (the historian thread).
describe('SQLite storage beside a second writer', () => {
  let database: TestDatabase;
  let storage: Storage;
  let other: SQLite.Database;

  before(async () => {
    database = await createTestDatabase('sqlite');
    storage = openStorage({ dataDir: database.dataDir });
    await sql`create table probe (id integer primary key, label text not null)`.execute(storage.db);
    other = new SQLite(join(database.dataDir, 'meridian.db'));
  });
  after(async () => {
    other?.close();
    await storage?.close();
    await database?.drop();
  });
  beforeEach(async () => {
    if (other.inTransaction) other.exec('rollback');
    await sql`delete from probe`.execute(storage.db);
  });

  /** Counts event-loop turns until `promise` settles: a wait in SQLite's busy handler would allow none. */
  async function turnsWhile(promise: Promise<unknown>, releaseAfterMs: number, release: () => void) {
    let turns = 0;
    let settled = false;
    const ticking = setInterval(() => turns++, 1);
    const releasing = setTimeout(release, releaseAfterMs);
    try {
      await promise.finally(() => {
        settled = true;
      });
    } finally {
      clearInterval(ticking);
      clearTimeout(releasing);
    }
    return { turns, settled };
  }

  it('a write waits for the other writer on timers and goes through once the lock is free', async () => {
    other.exec('begin immediate');
    other.prepare("insert into probe (id, label) values (1, 'other')").run();
    let done = false;
    const write = sql`insert into probe (id, label) values (2, 'ours')`.execute(storage.db).then(() => {
      done = true;
    });
    await new Promise((resolve) => setTimeout(resolve, 30));
    assert.equal(done, false, 'the write waits while the other connection holds the lock');
    const { turns } = await turnsWhile(write, 30, () => other.exec('commit'));
    assert.ok(turns >= 5, `the event loop kept running while the write waited (${turns} timer turns)`);
    const rows = await sql<{ id: number }>`select id from probe order by id`.execute(storage.db);
    assert.deepEqual(
      rows.rows.map((r) => r.id),
      [1, 2],
    );
  });

  it('a transaction that reads before it writes begins IMMEDIATE, so the other commit cannot invalidate it', async () => {
    other.exec('begin immediate');
    const transaction = storage.db.transaction().execute(async (trx) => {
      const before = await sql<{ n: number }>`select count(*) as n from probe`.execute(trx);
      await sql`insert into probe (id, label) values (${10 + before.rows[0]!.n}, 'counted')`.execute(trx);
      return before.rows[0]!.n;
    });
    // The other writer commits a row while ours waits: ours must count it, not fail with SQLITE_BUSY_SNAPSHOT.
    await new Promise((resolve) => setTimeout(resolve, 20));
    other.prepare("insert into probe (id, label) values (1, 'other')").run();
    other.exec('commit');
    assert.equal(await transaction, 1);
    const rows = await sql<{ id: number }>`select id from probe order by id`.execute(storage.db);
    assert.deepEqual(
      rows.rows.map((r) => r.id),
      [1, 11],
    );
  });

  it('reads are not held up by the other writer', async () => {
    await sql`insert into probe (id, label) values (1, 'committed')`.execute(storage.db);
    other.exec('begin immediate');
    other.prepare("insert into probe (id, label) values (2, 'uncommitted')").run();
    const rows = await sql<{ label: string }>`select label from probe order by id`.execute(storage.db);
    assert.deepEqual(
      rows.rows.map((r) => r.label),
      ['committed'],
    );
    other.exec('rollback');
  });

  it('an error other than a busy lock is not retried', async () => {
    await sql`insert into probe (id, label) values (1, 'one')`.execute(storage.db);
    await assert.rejects(sql`insert into probe (id, label) values (1, 'again')`.execute(storage.db), {
      code: 'SQLITE_CONSTRAINT_PRIMARYKEY',
    });
  });
});
