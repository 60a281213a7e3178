import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { getPriority, tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { classifyDriverError } from '../driver-errors.js';
import { SQLITE_THREAD_NICENESS, SqliteThread } from './sqlite-thread.js';

// The threads' programs: test-workers/*.worker.ts.
const worker = (name: string) => ({ name: `test-workers/${name}`, from: import.meta.url });
const NUMBERS = worker('numbers');

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
    const reader = new SqliteThread<{ numbers: number[] }, number>('reader', worker('count'), { file });
    try {
      return await reader.request({ numbers: [] });
    } finally {
      await reader.close();
    }
  };

  it('answers each message with what run returned, in the order sent', async () => {
    const thread = new SqliteThread<{ numbers: number[] }, number>('numbers thread', NUMBERS, { file });
    const answers = await Promise.all([[1, 2], [3], [4, 5, 6]].map((numbers) => thread.request({ numbers })));
    assert.deepEqual(answers, [3, 3, 15]);
    assert.equal(await count(), 6);
    await thread.close();
  });

  it('refuses a message whose transaction fails with the driver error, and commits none of it', async () => {
    const thread = new SqliteThread<{ numbers: number[] }, number>('numbers thread', NUMBERS, { file });
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
    const thread = new SqliteThread<{ numbers: number[] }, number>('numbers thread', NUMBERS, { file });
    const pending = [1, 2, 3].map((n) => thread.request({ numbers: [n] }));
    await thread.close();
    assert.deepEqual(await Promise.all(pending), [1, 2, 3]);
    assert.equal(await thread.request({ numbers: [4] }), 4);
    await thread.close();
  });

  it('refuses what was in flight with EIO when the thread dies, then starts a new thread', async () => {
    const dying = new SqliteThread<{ numbers: number[] }, number>('dying thread', worker('dying'), {});
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
    const thread = new SqliteThread<{ numbers: number[] }, number>('numbers thread', NUMBERS, {
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
    const thread = new SqliteThread<object, number>('priority thread', worker('priority'), {});
    try {
      const eventLoop = getPriority();
      assert.equal(await thread.request({}), Math.min(19, eventLoop + SQLITE_THREAD_NICENESS));
      assert.equal(getPriority(), eventLoop, 'the event loop keeps its priority');
    } finally {
      await thread.close();
    }
  });
});
