// The audit thread (audit-writer.ts). A message is one batch: the rows' values in the writer's column
// order, one after the other; the answer is the number of rows written. The statements come in
// workerData, built by audit-writer.ts, the one place they are written.
import Database from 'better-sqlite3';
import { type SqliteThreadData, serveSqliteThread } from '../../../storage/sqlite/sqlite-thread-serve.js';

interface AuditThreadData extends SqliteThreadData {
  /** Values a row. */
  width: number;
  /** Rows an insertChunk statement. */
  chunk: number;
  insertOne: string;
  insertChunk: string;
}

serveSqliteThread<unknown[], number, AuditThreadData>(
  ({ file, busyTimeoutMs, width, chunk, insertOne, insertChunk }) => {
    const db = new Database(file);
    db.pragma(`busy_timeout = ${Number(busyTimeoutMs)}`);
    db.pragma('synchronous = NORMAL');
    const one = db.prepare(insertOne);
    const many = db.prepare(insertChunk);
    const insert = db.transaction((values: unknown[]) => {
      const rows = values.length / width;
      let row = 0;
      for (; row + chunk <= rows; row += chunk) many.run(values.slice(row * width, (row + chunk) * width));
      for (; row < rows; row++) one.run(values.slice(row * width, (row + 1) * width));
      return rows;
    });
    return { run: insert, close: () => db.close() };
  },
);
