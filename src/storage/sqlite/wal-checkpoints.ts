import { SqliteThread } from './sqlite-thread.js';

/** How often the checkpoint thread copies what the WAL of `meridian.db` holds into the database file. */
const CHECKPOINT_EVERY_MS = 1000;

/**
 * The event loop's connection checkpoints by itself only once the WAL holds this many pages (64 MiB): a
 * safety net, should the checkpoint thread fail or fall behind. SQLite's default is 1,000 pages.
 */
export const EVENT_LOOP_AUTOCHECKPOINT_PAGES = 16_384;

/**
 * Checkpoints of `meridian.db`'s WAL on a thread of their own. A connection checkpoints when its commit
 * finds the WAL past `wal_autocheckpoint` pages, in that commit: on the event loop's connection, every
 * thousand pages or so a commit copied 4 MiB into the database file and flushed it to disk while requests
 * waited (in a profile of pipeline executions with node runs kept, commits took 1.6 ms on average, most
 * of it in those checkpoints). Here a thread checkpoints every second instead, and the event loop's
 * connection keeps a far threshold (EVENT_LOOP_AUTOCHECKPOINT_PAGES) as a safety net. The thread's
 * program: wal-checkpoint.worker.ts.
 */
export function startWalCheckpoints(file: string): { close(): Promise<void> } {
  const thread = new SqliteThread<object, unknown>(
    'checkpoint thread',
    { name: 'wal-checkpoint', from: import.meta.url },
    { file },
  );
  let running = false;
  const timer = setInterval(() => {
    if (running) return;
    running = true;
    // A failed checkpoint is tried again at the next tick; meanwhile the safety net holds.
    void thread
      .request({})
      .catch(() => {})
      .finally(() => {
        running = false;
      });
  }, CHECKPOINT_EVERY_MS);
  timer.unref();
  return {
    async close() {
      clearInterval(timer);
      await thread.close();
    },
  };
}
