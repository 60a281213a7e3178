import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { type AuditWriter, createAuditWriter } from '../../src/modules/oauth2/token/audit-writer.js';
import { type IssuanceEntry, issuanceAuditRow } from '../../src/modules/oauth2/token/issuance-audit-row.js';
import { testDialects } from '../helpers/dialects.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';

const entry = (n: number, batch: string): IssuanceEntry => ({
  at: 1_700_000_000_000 + n,
  userId: `user-${n}`,
  clientId: `client-${n}`,
  grantType: 'client_credentials',
  scope: `uns:read custom:"${n}"\\`,
  jti: `jti-${n}`,
  requestId: `req-${batch}-${String(n).padStart(3, '0')}`,
});

/** The row an entry should be stored as: its id is made by the writer, a UUIDv7 of the entry's time. */
const expectedRow = (e: IssuanceEntry) => {
  const { id: _id, ...row } = issuanceAuditRow(e);
  return row;
};
const isUuidV7Of = (id: string, at: number) =>
  /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/.test(id) &&
  id.replace(/-/g, '').slice(0, 12) === at.toString(16).padStart(12, '0');

// On a SQLite file the batches are written by a thread of their own; elsewhere through the storage.
for (const dialect of testDialects()) {
  describe(`token issuance audit writer [${dialect}]`, () => {
    let server: TestServer;
    let writer: AuditWriter;
    before(async () => {
      server = await startTestServer(dialect);
      writer = createAuditWriter(server.storage);
    });
    after(async () => {
      await writer?.close();
      await server?.close();
    });

    const stored = (batch: string) =>
      server.storage.db
        .selectFrom('audit_log')
        .selectAll()
        .where('request_id', 'like', `req-${batch}-%`)
        .orderBy('request_id')
        .execute();

    it('writes a row of every entry, every column, id a UUIDv7 of its time: 50-row statements, then single rows', async () => {
      const entries = Array.from({ length: 57 }, (_, n) => entry(n, 'a'));
      await writer.write(entries);
      const back = await stored('a');
      assert.deepEqual(
        back.map(({ id: _id, ...r }) => ({ ...r, at: Number(r.at) })),
        entries.map(expectedRow),
      );
      for (const [n, r] of back.entries()) assert.ok(isUuidV7Of(r.id, entries[n]!.at), r.id);
      assert.equal(new Set(back.map((r) => r.id)).size, back.length, 'ids are distinct');
    });

    it('refuses a batch the database refuses, with the driver error, and stores none of it', async () => {
      // audit_log.at is NOT NULL.
      const entries = [entry(1, 'b'), { ...entry(2, 'b'), at: null as unknown as number }, entry(3, 'b')];
      await assert.rejects(writer.write(entries), /NOT NULL|null value/i);
      assert.deepEqual(await stored('b'), []);
      await writer.write([entry(4, 'b')]);
      assert.equal((await stored('b')).length, 1, 'the writer goes on after a refused batch');
    });

    it("waits for another writer's transaction instead of failing", async () => {
      let written: Promise<void> | undefined;
      await server.storage.db.transaction().execute(async (trx) => {
        // The event loop's connection holds the write lock (on SQLite) while the batch is handed over.
        await trx
          .insertInto('audit_log')
          .values(issuanceAuditRow(entry(0, 'c')))
          .execute();
        written = writer.write([entry(1, 'c'), entry(2, 'c')]);
        await sleep(300);
      });
      await written;
      assert.equal((await stored('c')).length, 3);
    });
  });
}
