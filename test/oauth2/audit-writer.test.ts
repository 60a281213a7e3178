import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { type AuditWriter, createAuditWriter } from '../../src/modules/oauth2/token/audit-writer.js';
import type { AuditLogTable } from '../../src/storage/tables.js';
import { testDialects } from '../helpers/dialects.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';

const row = (n: number, batch: string): AuditLogTable => ({
  id: `01900000-0000-7000-8000-${batch}${String(n).padStart(12 - batch.length, '0')}`,
  at: 1_700_000_000_000 + n,
  organization_id: null,
  actor_user_id: `user-${n}`,
  actor_client_id: `client-${n}`,
  action: 'oauth2_token.issued',
  target_type: 'oauth2_client',
  target_id: `client-${n}`,
  details: JSON.stringify({ n, text: 'quotes " and \\ and NULL' }),
  request_id: `req-${n}`,
});

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

    const stored = (prefix: string) =>
      server.storage.db
        .selectFrom('audit_log')
        .selectAll()
        .where('id', 'like', `01900000-0000-7000-8000-${prefix}%`)
        .orderBy('id')
        .execute();

    it('writes every column of every row: whole 50-row statements, then single rows', async () => {
      const rows = Array.from({ length: 57 }, (_, n) => row(n, 'a'));
      await writer.write(rows);
      const back = await stored('a');
      assert.deepEqual(
        back.map((r) => ({ ...r, at: Number(r.at) })),
        rows,
      );
    });

    it('refuses a batch the database refuses, with the driver error, and stores none of it', async () => {
      const rows = [row(1, 'b'), row(2, 'b'), row(1, 'b')];
      await assert.rejects(writer.write(rows), /unique|UNIQUE/);
      assert.deepEqual(await stored('b'), []);
      await writer.write([row(3, 'b')]);
      assert.equal((await stored('b')).length, 1, 'the writer goes on after a refused batch');
    });

    it("waits for another writer's transaction instead of failing", async () => {
      let written: Promise<void> | undefined;
      await server.storage.db.transaction().execute(async (trx) => {
        // The event loop's connection holds the write lock (on SQLite) while the batch is handed over.
        await trx.insertInto('audit_log').values(row(0, 'c')).execute();
        written = writer.write([row(1, 'c'), row(2, 'c')]);
        await sleep(300);
      });
      await written;
      assert.equal((await stored('c')).length, 3);
    });
  });
}
