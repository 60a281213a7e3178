import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createReceiptClock } from './receipt-clock.js';

const asMicros = (ms: number) => Math.round(ms * 1000);

describe('createReceiptClock', () => {
  it('answers the clock time when it has moved on since the last call', () => {
    let ms = 1_763_900_000_000;
    const receipt = createReceiptClock(() => ms);
    assert.equal(asMicros(receipt()), ms * 1000);
    ms += 5;
    assert.equal(asMicros(receipt()), ms * 1000);
  });

  it('advances by a microsecond a call while the clock stands still, and never goes back', () => {
    let ms = 1_763_900_000_000;
    const receipt = createReceiptClock(() => ms);
    const times = Array.from({ length: 2500 }, () => asMicros(receipt()));
    assert.deepEqual(
      times,
      times.map((_, i) => ms * 1000 + i),
    );
    ms -= 1000; // the system clock stepped back
    assert.equal(asMicros(receipt()), times.at(-1)! + 1);
    ms += 2000;
    assert.equal(asMicros(receipt()), ms * 1000);
  });
});
