// A SQLite thread for sqlite-thread.test.ts that answers how many numbers numbers.worker.ts committed.
import Database from 'better-sqlite3';
import { serveSqliteThread } from '../sqlite-thread-serve.js';

serveSqliteThread<object, number>(({ file }) => {
  const db = new Database(file);
  return {
    run: () => db.prepare('select count(*) from numbers').pluck().get() as number,
    close: () => db.close(),
  };
});
