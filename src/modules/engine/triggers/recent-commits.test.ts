import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import type { CommitJob } from '../../uns/historian/historian-writer.js';
import { parsePublishRecord } from '../../uns/publishing/publish-record.js';
import type { Quality } from '../../uns/publishing/record-fields.js';
import { RecentCommits } from './recent-commits.js';

const ORG = 'org-a';
const OTHER = 'org-b';

function job(
  organizationId: string,
  receivedUs: number,
  values: { topic: string; value: unknown; source?: string; quality?: Quality }[],
): CommitJob {
  return {
    organizationId,
    receivedUs,
    records: values.map(({ topic, value, source, quality }) => ({
      record: parsePublishRecord(
        { topic, value, ...(source ? { source } : {}) },
        { prefix: 'v1', now: () => receivedUs / 1000 },
      ),
      quality: quality ?? 0,
      violations: [],
    })),
  };
}

/** What a trigger is given of a job's values. */
const expected = (commit: CommitJob) =>
  commit.records.map(({ record, quality }) => ({
    receivedUs: commit.receivedUs,
    topic: record.topic,
    source: record.source,
    valueJson: record.valueJson,
    quality,
    timestampUs: record.timestampUs,
  }));

describe('RecentCommits', () => {
  it("answers an organization's values received since a time, in commit order, as they were committed", () => {
    const recent = new RecentCommits();
    const jobs = [
      job(ORG, 1_000, [{ topic: 'v1/plant/a', value: 1.5 }]),
      job(OTHER, 2_000, [{ topic: 'v1/plant/a', value: 2 }]),
      job(ORG, 3_000, [
        { topic: 'v1/Überlingen/Öfen/température', value: 'ready ✓ 🏭', source: 'connection:c1', quality: 2 },
        { topic: 'v1/plant/b', value: { nested: [1, null, 'x'] }, quality: 1 },
        { topic: 'v1/plant/c', value: true, source: '' },
      ]),
      job(ORG, 4_000, [{ topic: 'v1/plant/d', value: -0.000001 }]),
    ];
    for (const j of jobs) recent.add(j);
    assert.deepEqual(
      [...recent.valuesOf(ORG, 0)],
      [...expected(jobs[0]!), ...expected(jobs[2]!), ...expected(jobs[3]!)],
    );
    assert.deepEqual([...recent.valuesOf(ORG, 3_000)], [...expected(jobs[2]!), ...expected(jobs[3]!)]);
    assert.deepEqual([...recent.valuesOf(OTHER, 0)], expected(jobs[1]!));
    assert.deepEqual([...recent.valuesOf('org-c', 0)], []);
    assert.deepEqual([...recent.valuesOf(ORG, 4_001)], []);
  });

  it('keeps a job larger than a chunk whole, and the jobs around it', () => {
    const recent = new RecentCommits();
    // Ten values of 20,000 characters, 50,000 bytes in UTF-8: 500 KB, two chunks' worth.
    const wide = 'ü€'.repeat(10_000);
    const big = job(
      ORG,
      2_000,
      Array.from({ length: 10 }, (_, i) => ({ topic: `v1/plant/wide${i}`, value: `${i}${wide}` })),
    );
    const before = job(ORG, 1_000, [{ topic: 'v1/plant/a', value: 1 }]);
    const after = job(ORG, 3_000, [{ topic: 'v1/plant/b', value: 2 }]);
    for (const j of [before, big, after]) recent.add(j);
    assert.deepEqual(
      [...recent.valuesOf(ORG, 0)],
      [...expected(before), ...expected(big), ...expected(after)],
    );
  });

  it('forgets whole chunks whose every commit is older than the horizon, and starts again once empty', () => {
    const recent = new RecentCommits();
    const value = 'x'.repeat(3000);
    // About 3 KB a job: 200 jobs fill three chunks of 256 KiB.
    const jobs = Array.from({ length: 200 }, (_, i) =>
      job(ORG, (i + 1) * 1000, [{ topic: 'v1/plant/a', value }]),
    );
    for (const j of jobs) recent.add(j);
    const remembered = () => [...recent.valuesOf(ORG, 0)].map((v) => v.receivedUs);
    recent.forgetBefore(100_500);
    const kept = remembered();
    // What is dropped is older than the horizon; what is newer is all kept.
    assert.ok(kept.length < 200, 'a chunk was dropped');
    assert.ok(kept[0]! <= 100_500, 'only whole chunks are dropped');
    assert.deepEqual(
      kept,
      jobs.map((j) => j.receivedUs).filter((us) => us >= kept[0]!),
    );
    recent.forgetBefore(200_001);
    assert.equal(recent.empty, true);
    assert.deepEqual(remembered(), []);
    recent.add(job(ORG, 300_000, [{ topic: 'v1/plant/b', value: 3 }]));
    assert.deepEqual(remembered(), [300_000]);
    recent.clear();
    assert.equal(recent.empty, true);
  });

  it('holds no reference to the jobs it remembers (they are garbage once committed)', async () => {
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    const recent = new RecentCommits();
    let committed: CommitJob | undefined = job(ORG, 1_000, [
      { topic: 'v1/plant/a', value: { big: 'y'.repeat(100) } },
    ]);
    const gone = new WeakRef(committed.records[0]!.record);
    recent.add(committed);
    committed = undefined;
    await new Promise((resolve) => setImmediate(resolve));
    gc();
    assert.equal(gone.deref(), undefined);
    assert.equal([...recent.valuesOf(ORG, 0)].length, 1);
  });
});
