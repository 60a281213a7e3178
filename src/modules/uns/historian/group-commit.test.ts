import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { GroupCommitter } from './group-commit.js';

describe('group commit', () => {
  it('lets concurrent jobs share one transaction and resolves each after it', async () => {
    const transactions: string[][] = [];
    const committer = new GroupCommitter<string>(
      async (jobs) => {
        transactions.push([...jobs]);
      },
      { windowMs: 0, maxRecords: 100, concurrency: 1 },
    );
    await Promise.all(['a', 'b', 'c'].map((job) => committer.submit(job, 1)));
    assert.deepEqual(transactions, [['a', 'b', 'c']]);
    assert.deepEqual(committer.stats, { transactions: 1, jobs: 3, records: 3 });
  });

  it('retries each job alone when a shared transaction fails, so a bad job fails only its own publisher', async () => {
    const committed: string[] = [];
    const committer = new GroupCommitter<string>(
      async (jobs) => {
        if (jobs.includes('bad')) throw new Error('constraint');
        committed.push(...jobs);
      },
      { windowMs: 0, maxRecords: 100, concurrency: 1 },
    );
    const results = await Promise.allSettled(['a', 'bad', 'c'].map((job) => committer.submit(job, 1)));
    assert.deepEqual(
      results.map((r) => r.status),
      ['fulfilled', 'rejected', 'fulfilled'],
    );
    assert.deepEqual(committed, ['a', 'c']);
  });

  it('never puts more than maxRecords in one transaction, but never splits a job', async () => {
    const sizes: number[] = [];
    const committer = new GroupCommitter<number>(
      async (jobs) => {
        sizes.push(jobs.reduce((a, b) => a + b, 0));
      },
      { windowMs: 0, maxRecords: 10, concurrency: 1 },
    );
    await Promise.all([4, 4, 4, 25].map((n) => committer.submit(n, n)));
    assert.ok(sizes.every((s) => s <= 10 || s === 25));
    assert.equal(
      sizes.reduce((a, b) => a + b, 0),
      37,
    );
  });

  it('drains: resolves once nothing is queued or being written', async () => {
    let written = 0;
    const committer = new GroupCommitter<number>(
      async () => {
        await new Promise((r) => setTimeout(r, 5));
        written++;
      },
      { windowMs: 1, maxRecords: 1, concurrency: 1 },
    );
    const pending = [committer.submit(1, 1), committer.submit(2, 1)];
    await committer.drain();
    assert.equal(written, 2);
    await Promise.all(pending);
  });
});
