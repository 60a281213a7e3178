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

  describe('a busy lock inside a transaction', () => {
    // A file in rollback-journal mode, attached: its COMMIT needs every reader gone, so a reader on another
    // connection makes the COMMIT (a statement of the open transaction) fail with SQLITE_BUSY.
    let reader: SQLite.Database;
    before(async () => {
      const file = join(database.dataDir, 'rollback-mode.db');
      await sql`attach database ${file} as side`.execute(storage.db);
      await sql`create table side.entries (id integer primary key)`.execute(storage.db);
      reader = new SQLite(file);
    });
    after(async () => {
      reader?.close();
      await sql`detach database side`.execute(storage.db);
    });
    beforeEach(async () => {
      if (reader.inTransaction) reader.exec('rollback');
      await sql`delete from side.entries`.execute(storage.db);
    });

    it('a transaction begun IMMEDIATE retries its statement on timers and commits once the reader is gone', async () => {
      reader.exec('begin');
      reader.prepare('select count(*) from entries').get();
      const transaction = storage.db.transaction().execute(async (trx) => {
        await sql`insert into side.entries (id) values (1)`.execute(trx);
        await sql`insert into probe (id, label) values (1, 'beside')`.execute(trx);
      });
      let settled = false;
      void transaction.then(
        () => (settled = true),
        () => (settled = true),
      );
      await new Promise((resolve) => setTimeout(resolve, 40));
      assert.equal(settled, false, 'the COMMIT waits while the reader holds its lock');
      const { turns } = await turnsWhile(transaction, 20, () => reader.exec('commit'));
      assert.ok(turns >= 5, `the event loop kept running while the COMMIT waited (${turns} timer turns)`);
      const side = await sql<{ id: number }>`select id from side.entries`.execute(storage.db);
      assert.deepEqual(side.rows, [{ id: 1 }]);
      const probe = await sql<{ id: number }>`select id from probe`.execute(storage.db);
      assert.deepEqual(probe.rows, [{ id: 1 }], 'both files committed, once');
    });

    it('a deferred transaction (a read snapshot) is not retried: its busy lock fails at once', async () => {
      reader.exec('begin');
      reader.prepare('select count(*) from entries').get();
      const started = Date.now();
      await assert.rejects(
        storage.db.connection().execute(async (held) => {
          await sql`begin deferred`.execute(held);
          try {
            await sql`insert into side.entries (id) values (2)`.execute(held);
            await sql`commit`.execute(held);
          } finally {
            await sql`rollback`.execute(held).catch(() => {});
          }
        }),
        { code: 'SQLITE_BUSY' },
      );
      assert.ok(Date.now() - started < 1000, 'refused without waiting for the reader');
      reader.exec('commit');
      const side = await sql<{ n: number }>`select count(*) as n from side.entries`.execute(storage.db);
      assert.equal(side.rows[0]!.n, 0);
    });
  });

  it('an error other than a busy lock is not retried', async () => {
    await sql`insert into probe (id, label) values (1, 'one')`.execute(storage.db);
    await assert.rejects(sql`insert into probe (id, label) values (1, 'again')`.execute(storage.db), {
      code: 'SQLITE_CONSTRAINT_PRIMARYKEY',
    });
  });
});
