import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MessageRates } from './message-rates.js';

describe('MessageRates', () => {
  it('counts totals at once and a rate over the last ten full seconds', async () => {
    const rates = new MessageRates();
    rates.add('received', 40);
    for (let i = 0; i < 10; i++) rates.add('received');
    rates.add('refused');
    assert.deepEqual(rates.snapshot().received?.total, 50);
    // This second is not a full one yet: the rate counts it once it is over (and the clock has moved).
    const nextSecond = 1000 - (Date.now() % 1000);
    await new Promise((resolve) => setTimeout(resolve, nextSecond + 250));
    const snapshot = rates.snapshot();
    assert.deepEqual(snapshot.received, { total: 50, perSecond: 5 });
    assert.deepEqual(snapshot.refused, { total: 1, perSecond: 0.1 });
    assert.equal(snapshot.delivered, undefined);
  });
});
