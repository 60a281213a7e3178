import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { openStorage, type Storage } from '../../src/storage/database.js';
import { insertAsArrays } from '../../src/storage/value-lists.js';
import { skipOutsideCi } from '../helpers/ci.js';
import { createTestDatabase, type TestDatabase, testDialects } from '../helpers/dialects.js';

/**
 * insertAsArrays (PostgreSQL only: SQLite inserts rows as values) stores every value as given: JSON texts
 * with quotes, backslashes and escapes, other scripts, empty strings, nulls, numbers past 32 bits.
 */
describe('Rows inserted as one JSON array a column [postgres]', {
  skip: testDialects().includes('postgres')
    ? false
    : skipOutsideCi('PostgreSQL is not among the test dialects'),
}, () => {
  let database: TestDatabase;
  let storage: Storage;
  before(async () => {
    database = await createTestDatabase('postgres');
    storage = openStorage({ databaseUrl: database.databaseUrl, dataDir: database.dataDir, poolSize: 2 });
    await sql`create table arrays_probe (n integer, id text, at bigint, body text)`.execute(storage.db);
  });
  after(async () => {
    await storage?.close();
    await database?.drop();
  });

  const TYPES = { n: 'integer', id: 'text', at: 'bigint', body: 'text' } as const;
  type Row = { n: number; id: string | null; at: number | null; body: string | null | undefined };
  const stored = async () =>
    (
      await sql<Row>`select n, id, at::text as at, body from arrays_probe order by n`.execute(storage.db)
    ).rows.map((r) => ({ ...r, at: r.at === null ? null : Number(r.at) }));

  it('stores each value as given, in step, nulls as nulls', async () => {
    const rows: Row[] = [
      {
        n: 1,
        id: 'a',
        at: 1_795_997_761_249,
        body: JSON.stringify({ say: 'he said "hi"\\n', path: 'C:\\x' }),
      },
      { n: 2, id: '', at: null, body: null },
      { n: 3, id: 'ü-日本-🙂', at: 0, body: 'line\nbreak\ttab {braces}, "quotes" and \\ backslash' },
      { n: 4, id: 'NULL', at: -5, body: undefined },
      { n: 5, id: null, at: 2 ** 53 - 1, body: '\\u0000 as text, not a character' },
    ];
    await insertAsArrays<Row>(storage.db, 'arrays_probe', TYPES, rows);
    assert.deepEqual(
      await stored(),
      rows.map((r) => ({ ...r, body: r.body ?? null })),
    );
  });

  it('a lone surrogate is stored as U+FFFD, as the driver sends a string', async () => {
    await sql`delete from arrays_probe`.execute(storage.db);
    await insertAsArrays<Row>(storage.db, 'arrays_probe', TYPES, [
      { n: 1, id: 'x\ud800y', at: 1, body: 'ok' },
    ]);
    assert.equal((await stored())[0]!.id, 'x\ufffdy');
  });

  it('no rows inserts nothing; a value of the wrong type fails the statement and stores nothing', async () => {
    await sql`delete from arrays_probe`.execute(storage.db);
    await insertAsArrays<Row>(storage.db, 'arrays_probe', TYPES, []);
    await assert.rejects(() =>
      insertAsArrays<Row>(storage.db, 'arrays_probe', TYPES, [
        { n: 1, id: 'a', at: 1, body: 'x' },
        { n: 2, id: 'b', at: 'soon' as unknown as number, body: 'y' },
      ]),
    );
    assert.deepEqual(await stored(), []);
  });
});
