import assert from 'node:assert/strict';
import { statSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import SQLite from 'better-sqlite3';
import { sql } from 'kysely';
import { createTestDatabase, type TestDatabase, testDialects } from '../../test/helpers/dialects.js';
import { waitUntil } from '../../test/helpers/wait.js';
import { openStorage, STATEMENT_CACHE_SIZE, type Storage, withStatementCache } from './database.js';
import { classifyDriverError } from './driver-errors.js';
import { EVENT_LOOP_AUTOCHECKPOINT_PAGES } from './sqlite/wal-checkpoints.js';

// The table is not part of the schema: these tests are about the storage layer, not about migrations.
type Row = { id: number; label: string };
const rows = (storage: Storage) =>
  sql<Row>`select id, label from storage_probe order by id`.execute(storage.db).then((r) => r.rows);

for (const dialect of testDialects()) {
  describe(`storage layer [${dialect}]`, () => {
    let database: TestDatabase;
    let storage: Storage;

    before(async () => {
      database = await createTestDatabase(dialect);
      storage = openStorage({ databaseUrl: database.databaseUrl, dataDir: database.dataDir });
      await sql`create table storage_probe (id integer primary key, label text not null)`.execute(storage.db);
    });
    after(async () => {
      await storage?.close();
      await database?.drop();
    });

    const synchronousModes = async () =>
      dialect === 'sqlite'
        ? (await sql<{ synchronous: number }>`pragma synchronous`.execute(storage.db)).rows[0]!.synchronous
        : null;

    it('durableWrite commits the transaction and answers its result', async () => {
      const answer = await storage.durableWrite((db) =>
        db.transaction().execute(async (trx) => {
          await sql`insert into storage_probe (id, label) values (1, 'one'), (2, 'two')`.execute(trx);
          return 'done';
        }),
      );
      assert.equal(answer, 'done');
      assert.deepEqual(
        (await rows(storage)).map((r) => r.label),
        ['one', 'two'],
      );
    });

    it('durableWrite stores nothing when the work fails, and says why', async () => {
      await assert.rejects(
        storage.durableWrite((db) =>
          db.transaction().execute(async (trx) => {
            await sql`insert into storage_probe (id, label) values (3, 'three')`.execute(trx);
            await sql`insert into storage_probe (id, label) values (1, 'duplicate')`.execute(trx);
          }),
        ),
        (error: unknown) => classifyDriverError(error) === 'unique_violation',
      );
      assert.deepEqual(
        (await rows(storage)).map((r) => r.id),
        [1, 2],
      );
    });

    if (dialect === 'sqlite') {
      it('durableWrite restores synchronous = FULL on every attached file, after success and failure', async () => {
        const FULL = 2;
        assert.equal(await synchronousModes(), FULL);
        await storage.durableWrite(async (db) => {
          const inside = await sql<{ synchronous: number }>`pragma synchronous`.execute(db);
          assert.equal(inside.rows[0]!.synchronous, 1, 'NORMAL while the write runs');
        });
        assert.equal(await synchronousModes(), FULL);
        await storage.durableWrite(() => Promise.reject(new Error('boom'))).catch(() => {});
        assert.equal(await synchronousModes(), FULL);
      });

      it('a cached statement is reusable after a stream over it stopped early', async () => {
        await sql`insert into storage_probe (id, label) values (10, 'a'), (11, 'b'), (12, 'c')`.execute(
          storage.db,
        );
        const query = storage.db.selectFrom('storage_probe' as never).select(['id' as never]);
        for await (const _row of query.stream()) break;
        assert.equal((await query.execute()).length, 5);
        assert.equal((await query.execute()).length, 5);
      });

      it("the WAL is checkpointed into the database file by a thread, not by the event loop's commits", async () => {
        const limit = await sql<{ wal_autocheckpoint: number }>`pragma wal_autocheckpoint`.execute(
          storage.db,
        );
        assert.equal(limit.rows[0]!.wal_autocheckpoint, EVENT_LOOP_AUTOCHECKPOINT_PAGES);
        await sql`create table checkpoint_probe (id integer primary key, filler text not null)`.execute(
          storage.db,
        );
        const before = statSync(storage.location).size;
        // About 1 MiB (some 500 pages, below even SQLite's default threshold): only the thread moves it.
        await storage.durableWrite((db) =>
          db.transaction().execute(async (trx) => {
            for (let i = 0; i < 250; i++)
              await sql`insert into checkpoint_probe (filler) values (${'x'.repeat(4000)})`.execute(trx);
          }),
        );
        assert.equal(statSync(storage.location).size, before, 'the commit left its pages in the WAL');
        await waitUntil('the checkpoint', async () =>
          statSync(storage.location).size > before + 500_000 ? true : null,
        );
      });
    }
  });
}

describe('driver error classification of a lost PostgreSQL connection', () => {
  // pg's words (no code) for a query, or the ROLLBACK, on a client whose connection broke mid-transaction.
  for (const message of [
    'Client has encountered a connection error and is not queryable',
    'Connection terminated unexpectedly',
  ]) {
    it(`"${message}" is unavailable`, () => {
      assert.equal(classifyDriverError(new Error(message)), 'unavailable');
    });
  }
});

describe('driver error classification of file-system and text errors', () => {
  for (const [code, kind] of [
    ['22021', 'unrepresentable_text'],
    ['22P05', 'unrepresentable_text'],
    ['ENOSPC', 'storage_full'],
    ['EDQUOT', 'storage_full'],
    ['EROFS', 'read_only'],
    ['EIO', 'unavailable'],
  ] as const) {
    it(`${code} is ${kind}`, () => {
      assert.equal(classifyDriverError(Object.assign(new Error(code), { code })), kind);
    });
  }
});

describe('the SQLite statement cache', () => {
  it('keeps the most recently used statements and drops the least recently used first', () => {
    const connection = new SQLite(':memory:');
    const cache = withStatementCache(connection);
    try {
      const text = (i: number) => `select ${i} as n`;
      const first = cache.prepare(text(0));
      const second = cache.prepare(text(1));
      for (let i = 2; i < STATEMENT_CACHE_SIZE; i++) cache.prepare(text(i));
      // Full. Using the first makes the second the least recently used.
      assert.equal(cache.prepare(text(0)), first, 'a cached text answers its statement');
      cache.prepare(text(STATEMENT_CACHE_SIZE));
      assert.equal(cache.prepare(text(0)), first, 'the recently used one is kept');
      assert.notEqual(cache.prepare(text(1)), second, 'the least recently used one was dropped');
      assert.equal((cache.prepare(text(0)).get() as { n: number }).n, 0);
    } finally {
      cache.close();
    }
  });

  it('answers a fresh statement for a text whose cached one is still being iterated', () => {
    const connection = new SQLite(':memory:');
    const cache = withStatementCache(connection);
    try {
      const text = 'select value from json_each(json_array(1, 2, 3))';
      const cached = cache.prepare(text);
      const iterator = cached.iterate();
      iterator.next();
      const fresh = cache.prepare(text);
      assert.notEqual(fresh, cached);
      assert.deepEqual(fresh.pluck().all(), [1, 2, 3]);
      iterator.return?.();
      assert.equal(cache.prepare(text), cached, 'the cached one again once free');
    } finally {
      cache.close();
    }
  });
});
