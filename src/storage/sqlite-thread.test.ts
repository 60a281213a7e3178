import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { getPriority, tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { classifyDriverError } from './driver-errors.js';
import { SQLITE_THREAD_NICENESS, SqliteThread, sqliteThreadSource } from './sqlite-thread.js';

// A thread that keeps numbers in a table: `run` inserts a message's numbers and answers their sum.
const SOURCE = sqliteThreadSource(`
function open(Database, { file }) {
  const db = new Database(file);
  db.exec('create table if not exists numbers (n integer not null check (n >= 0))');
  const insert = db.prepare('insert into numbers (n) values (?)');
  const run = db.transaction(({ numbers }) => {
    for (const n of numbers) insert.run(n);
    return numbers.reduce((sum, n) => sum + n, 0);
  });
  return { run, close: () => db.close() };
}
`);

describe('SQLite thread', () => {
  let dir: string;
  let file: string;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'meridian-sqlite-thread-'));
    file = join(dir, 'numbers.db');
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  /** Rows committed, as another connection (a second thread) sees them. */
  const count = async () => {
    const reader = new SqliteThread<{ numbers: number[] }, number>(
      'reader',
      sqliteThreadSource(`
        function open(Database, { file }) {
          const db = new Database(file);
          return { run: () => db.prepare('select count(*) from numbers').pluck().get(), close: () => db.close() };
        }`),
      { file },
    );
    try {
      return await reader.request({ numbers: [] });
    } finally {
      await reader.close();
    }
  };

  it('answers each message with what run returned, in the order sent', async () => {
    const thread = new SqliteThread<{ numbers: number[] }, number>('numbers thread', SOURCE, { file });
    const answers = await Promise.all([[1, 2], [3], [4, 5, 6]].map((numbers) => thread.request({ numbers })));
    assert.deepEqual(answers, [3, 3, 15]);
    assert.equal(await count(), 6);
    await thread.close();
  });

  it('refuses a message whose transaction fails with the driver error, and commits none of it', async () => {
    const thread = new SqliteThread<{ numbers: number[] }, number>('numbers thread', SOURCE, { file });
    const before = await count();
    await assert.rejects(thread.request({ numbers: [7, -1] }), (error: Error & { code?: string }) => {
      assert.equal(error.code, 'SQLITE_CONSTRAINT_CHECK');
      assert.match(error.message, /CHECK constraint failed/);
      return true;
    });
    assert.equal(await count(), before);
    assert.equal(await thread.request({ numbers: [8] }), 8, 'the thread goes on after a failed message');
    await thread.close();
  });

  it('answers what is in flight before it closes, and starts again on the next message', async () => {
    const thread = new SqliteThread<{ numbers: number[] }, number>('numbers thread', SOURCE, { file });
    const pending = [1, 2, 3].map((n) => thread.request({ numbers: [n] }));
    await thread.close();
    assert.deepEqual(await Promise.all(pending), [1, 2, 3]);
    assert.equal(await thread.request({ numbers: [4] }), 4);
    await thread.close();
  });

  it('refuses what was in flight with EIO when the thread dies, then starts a new thread', async () => {
    const dying = new SqliteThread<{ numbers: number[] }, number>(
      'dying thread',
      `const { parentPort } = require('node:worker_threads');
       parentPort.on('message', () => process.exit(3));
       parentPort.postMessage({ ready: true });`,
      {},
    );
    for (let attempt = 0; attempt < 2; attempt++) {
      await assert.rejects(dying.request({ numbers: [1] }), (error: Error & { code?: string }) => {
        assert.match(error.message, /^the dying thread exited \(code 3\)$/);
        assert.equal(error.code, 'EIO');
        assert.equal(classifyDriverError(error), 'unavailable');
        return true;
      });
    }
    await dying.close();
  });

  it('refuses every message with the driver error when the database cannot be opened', async () => {
    const thread = new SqliteThread<{ numbers: number[] }, number>('numbers thread', SOURCE, {
      file: join(dir, 'no-such-directory', 'numbers.db'),
    });
    for (let attempt = 0; attempt < 2; attempt++) {
      await assert.rejects(thread.request({ numbers: [1] }), (error: Error & { code?: string }) => {
        assert.equal(error.code, 'SQLITE_CANTOPEN');
        assert.equal(classifyDriverError(error), 'unavailable');
        return true;
      });
    }
    await thread.close();
  });

  it('runs at a lower priority than the event loop (niceness +5 on Linux)', async () => {
    // The thread answers its own niceness, read from /proc as the scheduler sees it.
    const thread = new SqliteThread<object, number>(
      'priority thread',
      sqliteThreadSource(`
        function open() {
          const stat = require('node:fs').readFileSync('/proc/thread-self/stat', 'utf8');
          return { run: () => Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]), close() {} };
        }`),
      {},
    );
    try {
      const eventLoop = getPriority();
      assert.equal(await thread.request({}), Math.min(19, eventLoop + SQLITE_THREAD_NICENESS));
      assert.equal(getPriority(), eventLoop, 'the event loop keeps its priority');
    } finally {
      await thread.close();
    }
  });
});
