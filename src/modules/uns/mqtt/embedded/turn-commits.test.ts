import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { AcceptedRecord } from '../../historian/historian-writer.js';
import type { PublishRecord } from '../../publishing/publish-record.js';
import { TurnCommits } from './turn-commits.js';

/** An accepted record carrying `n` as its value. */
const accepted = (n: number): AcceptedRecord => ({
  record: { value: n } as PublishRecord,
  quality: 0,
  violations: [],
});
const valuesOf = (records: AcceptedRecord[]) => records.map((r) => r.record.value as number);

/** TurnCommits whose commits refuse any job holding `bad`, recording each commit and outcome. */
function recording(bad = Number.NaN) {
  const commits: { organizationId: string; values: number[] }[] = [];
  const committed: number[] = [];
  const refused: number[] = [];
  const turns = new TurnCommits<number>({
    commit: async (organizationId, records) => {
      commits.push({ organizationId, values: valuesOf(records) });
      if (valuesOf(records).includes(bad)) throw new Error(`refuses ${bad}`);
    },
    committed: (n) => committed.push(n),
    refused: (n) => refused.push(n),
  });
  return { turns, commits, committed, refused };
}

const settle = () => new Promise((resolve) => setImmediate(resolve));

describe('TurnCommits', () => {
  it('commits the values of one organization received in one turn as one job, in the order received', async () => {
    const { turns, commits, committed } = recording();
    for (const n of [1, 2, 3]) turns.add('org-a', accepted(n), n);
    turns.add('org-b', accepted(10), 10);
    turns.add('org-a', accepted(4), 4);
    assert.deepEqual(commits, [], 'nothing is committed before the turn ends');
    await settle();
    assert.deepEqual(commits, [
      { organizationId: 'org-a', values: [1, 2, 3, 4] },
      { organizationId: 'org-b', values: [10] },
    ]);
    assert.deepEqual(committed, [1, 2, 3, 4, 10]);
  });

  it('commits the values of a later turn in a job of their own', async () => {
    const { turns, commits } = recording();
    turns.add('org-a', accepted(1), 1);
    await settle();
    turns.add('org-a', accepted(2), 2);
    await settle();
    assert.deepEqual(
      commits.map((c) => c.values),
      [[1], [2]],
    );
  });

  it('retries each value of a failing shared commit alone: only the bad one is refused', async () => {
    const { turns, commits, committed, refused } = recording(2);
    for (const n of [1, 2, 3]) turns.add('org-a', accepted(n), n);
    await settle();
    assert.deepEqual(
      commits.map((c) => c.values),
      [[1, 2, 3], [1], [2], [3]],
    );
    assert.deepEqual(committed.sort(), [1, 3]);
    assert.deepEqual(refused, [2]);
  });

  it('refuses the value of a failing commit of one value without retrying it', async () => {
    const { turns, commits, refused } = recording(7);
    turns.add('org-a', accepted(7), 7);
    await settle();
    assert.equal(commits.length, 1);
    assert.deepEqual(refused, [7]);
  });
});
