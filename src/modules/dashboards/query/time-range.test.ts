import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ApiError } from '../../../platform/errors.js';
import { mergeBuckets, type Point } from './series-results.js';
import { alignedBucketWidthMs, bucketWidthMs, resolveRange, resolveTime } from './time-range.js';

const NOW = Date.UTC(2026, 10, 25, 12, 0, 0);

describe('dashboard time ranges', () => {
  it('reads now, now-<n><unit> and RFC 3339', () => {
    assert.equal(resolveTime('now', NOW, 'from'), NOW);
    assert.equal(resolveTime('now-6h', NOW, 'from'), NOW - 6 * 3_600_000);
    assert.equal(resolveTime('now-2w', NOW, 'from'), NOW - 14 * 86_400_000);
    assert.equal(resolveTime('2026-11-25T11:00:00+01:00', NOW, 'from'), Date.UTC(2026, 10, 25, 10));
  });

  it('refuses malformed times and ranges, naming the field', () => {
    for (const [range, message] of [
      [{ from: 'now-6x', to: 'now' }, /^timeRange\.from must be now/],
      [{ from: 'now+1h', to: 'now' }, /^timeRange\.from must be now/],
      [{ from: 'now', to: '2026-11-25' }, /^timeRange\.to must be now/],
      [{ from: 'now-1h', to: 'now-2h' }, /^timeRange: from must be earlier than to/],
      [{ from: 'now', to: 'now' }, /^timeRange: from must be earlier than to/],
      [{ from: 'now-999999w', to: 'now' }, /^timeRange: at most ten years/],
    ] as const) {
      assert.throws(
        () => resolveRange(range, NOW, 'timeRange'),
        (error: unknown) =>
          error instanceof ApiError && error.statusCode === 400 && message.test(error.message),
      );
    }
  });

  it('picks a bucket width that never gives more buckets than pixels', () => {
    for (const rangeMs of [
      1_000,
      60_000,
      3_600_000,
      30 * 86_400_000,
      365 * 86_400_000,
      10 * 365 * 86_400_000,
    ]) {
      for (const pixels of [1, 7, 57, 300, 1024, 1920, 4000]) {
        const width = bucketWidthMs(rangeMs, pixels);
        assert.ok(Math.ceil(rangeMs / width) <= pixels, `${rangeMs} ms over ${pixels} px: width ${width}`);
      }
    }
    // 30 days over 1,200 px: 2,592,000 s / 1,200 = 2,160 s, so the next nice width, one hour.
    assert.equal(bucketWidthMs(30 * 86_400_000, 1200), 3_600_000);
  });

  it('picks widths whose buckets aligned to the epoch number at most one a pixel, wherever the range starts', () => {
    const next = (() => {
      let seed = 7;
      return () => {
        seed = (seed * 1664525 + 1013904223) >>> 0;
        return seed / 2 ** 32;
      };
    })();
    for (let i = 0; i < 2000; i++) {
      const fromMs = Math.floor(1.7e12 + next() * 1e11);
      const rangeMs = Math.max(1, Math.floor(next() ** 4 * 10 * 365 * 86_400_000));
      const pixels = 1 + Math.floor(next() * 4000);
      const width = alignedBucketWidthMs(fromMs, fromMs + rangeMs, pixels);
      const buckets = Math.floor((fromMs + rangeMs - 1) / width) - Math.floor(fromMs / width) + 1;
      assert.ok(
        buckets <= pixels,
        `${rangeMs} ms from ${fromMs} over ${pixels} px: ${buckets} buckets of ${width}`,
      );
      // Never coarser than needed by more than the next nice width allows.
      assert.ok(width >= bucketWidthMs(rangeMs, pixels));
    }
    // 30 days over 1,200 px from a whole hour: one-hour buckets, 720 of them.
    assert.equal(
      alignedBucketWidthMs(1_800_000_000_000, 1_800_000_000_000 + 30 * 86_400_000, 1200),
      3_600_000,
    );
  });

  it('merges fine buckets into coarse ones as one read of the coarse width would give', () => {
    const fine: Point[] = [
      { t: 0, count: 2, avg: 1, min: 0, max: 2, first: 0, last: 2 },
      { t: 10, count: 1, avg: 4, min: 4, max: 4, first: 4, last: 4 },
      { t: 30, count: 3, avg: 10, min: 9, max: 11, first: 9, last: 11 },
    ];
    assert.deepEqual(mergeBuckets(fine, 0, 20), [
      { t: 0, count: 3, avg: 2, min: 0, max: 4, first: 0, last: 4 },
      { t: 20, count: 3, avg: 10, min: 9, max: 11, first: 9, last: 11 },
    ]);
  });
});
