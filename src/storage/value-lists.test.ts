import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { powerOfTwoSlices } from './value-lists.js';

describe('powerOfTwoSlices', () => {
  it('slices any number of rows, in order, into power-of-two lengths of at most the largest', () => {
    for (const n of [0, 1, 2, 3, 5, 255, 256, 257, 700, 1000]) {
      const rows = Array.from({ length: n }, (_, i) => i);
      const slices = powerOfTwoSlices(rows);
      assert.deepEqual(slices.flat(), rows, `${n} rows come back whole and in order`);
      for (const slice of slices) {
        assert.ok(slice.length <= 256, `${n}: a slice of ${slice.length}`);
        assert.equal(slice.length & (slice.length - 1), 0, `${n}: ${slice.length} is a power of two`);
      }
    }
    assert.deepEqual(
      powerOfTwoSlices(Array.from({ length: 700 }, (_, i) => i)).map((s) => s.length),
      [256, 256, 128, 32, 16, 8, 4],
    );
    assert.deepEqual(
      powerOfTwoSlices([1, 2, 3, 4, 5, 6], 4).map((s) => s.length),
      [4, 2],
    );
  });
});
