// The checkpoint thread (wal-checkpoints.ts): a connection of its own to the main file, which only
// checkpoints: PASSIVE copies the frames no reader still needs and never waits for a writer.
import Database from 'better-sqlite3';
import { serveSqliteThread } from './sqlite-thread-serve.js';

serveSqliteThread<object, unknown>(({ file }) => {
  const db = new Database(file);
  db.pragma('busy_timeout = 1000');
  db.pragma('synchronous = FULL');
  db.pragma('wal_autocheckpoint = 0');
  return { close: () => db.close(), run: () => db.pragma('wal_checkpoint(PASSIVE)', { simple: false }) };
});
