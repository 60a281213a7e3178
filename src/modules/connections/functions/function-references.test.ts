import assert from 'node:assert/strict';
import test from 'node:test';
import { brief, C, F } from '../../../../test/helpers/references.js';
import { functionReferences } from './function-references.js';

test('a function belongs to its connection and publishes its UNS topic (read) or below it (subscribe)', () => {
  const read = functionReferences({
    id: F,
    connection_id: C,
    uns: JSON.stringify({ topic: 'v1/plant/temp', intervalMs: 1000 }),
  });
  assert.deepEqual(brief(read), [
    `belongs-to connection:${C} via connection`,
    'publishes topic:v1/plant/temp via uns.topic',
  ]);
  assert.equal(read[1]!.filter, false);

  const subscribe = functionReferences(
    { id: F, connection_id: C, uns: { topic: 'v1/plant/opc', items: { 'ns=2;s=Speed': 'v1/plant/speed' } } },
    'subscribe',
  );
  assert.deepEqual(brief(subscribe).slice(1), [
    'publishes topic:v1/plant/opc/# via uns.topic',
    'publishes topic:v1/plant/speed via uns.items.ns=2;s=Speed',
  ]);
  assert.equal(subscribe[1]!.filter, true);
  assert.equal(subscribe[2]!.path, '/uns/items/ns=2;s=Speed');

  // The direction given wins over the guess from intervalMs.
  const polled = functionReferences({ id: F, connection_id: C, uns: '{"topic":"v1/a"}' }, 'read');
  assert.equal(polled[1]!.topic, 'v1/a');
  assert.equal(functionReferences({ id: F, connection_id: C, uns: null }).length, 1);
});
