// A SQLite thread for sqlite-thread.test.ts that keeps numbers in a table: `run` inserts a message's
// numbers and answers their sum.
import Database from 'better-sqlite3';
import { serveSqliteThread } from '../sqlite-thread-serve.js';

serveSqliteThread<{ numbers: number[] }, number>(({ file }) => {
  const db = new Database(file);
  db.exec('create table if not exists numbers (n integer not null check (n >= 0))');
  const insert = db.prepare('insert into numbers (n) values (?)');
  const run = db.transaction(({ numbers }: { numbers: number[] }) => {
    for (const n of numbers) insert.run(n);
    return numbers.reduce((sum, n) => sum + n, 0);
  });
  return { run, close: () => db.close() };
});
