// The audit thread (audit-writer.ts). A message is one batch: the issuance entries' fields, one entry
// after the other (issuance-audit-row.ts); the thread builds their rows. The answer is the number of
// rows written. The statements come in
// workerData, built by audit-writer.ts, the one place they are written.
import Database from 'better-sqlite3';
import { type SqliteThreadData, serveSqliteThread } from '../../../storage/sqlite/sqlite-thread-serve.js';
import { auditRowValues, entryAt, issuanceAuditRow } from './issuance-audit-row.js';

interface AuditThreadData extends SqliteThreadData {
  /** Values a row. */
  width: number;
  /** Values an entry in a message. */
  entryWidth: number;
  /** Rows an insertChunk statement. */
  chunk: number;
  insertOne: string;
  insertChunk: string;
}

serveSqliteThread<unknown[], number, AuditThreadData>(
  ({ file, busyTimeoutMs, width, entryWidth, chunk, insertOne, insertChunk }) => {
    const db = new Database(file);
    db.pragma(`busy_timeout = ${Number(busyTimeoutMs)}`);
    db.pragma('synchronous = NORMAL');
    const one = db.prepare(insertOne);
    const many = db.prepare(insertChunk);
    const insert = db.transaction((entries: unknown[]) => {
      const values: unknown[] = [];
      for (let offset = 0; offset < entries.length; offset += entryWidth)
        values.push(...auditRowValues(issuanceAuditRow(entryAt(entries, offset))));
      const rows = values.length / width;
      let row = 0;
      for (; row + chunk <= rows; row += chunk) many.run(values.slice(row * width, (row + chunk) * width));
      for (; row < rows; row++) one.run(values.slice(row * width, (row + 1) * width));
      return rows;
    });
    return { run: insert, close: () => db.close() };
  },
);
