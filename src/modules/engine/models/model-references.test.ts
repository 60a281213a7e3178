import assert from 'node:assert/strict';
import test from 'node:test';
import { brief, M, P } from '../../../../test/helpers/references.js';
import { modelBindingReferences, modelReferences } from './model-references.js';

test('a model refers to the models of its model fields, nested in objects and arrays', () => {
  const refs = modelReferences({
    id: M,
    fields: JSON.stringify([
      { name: 'speed', type: 'number' },
      { name: 'motor', type: 'model', model: { id: M.replace('3333-4', '5555-4') } },
      {
        name: 'axes',
        type: 'array',
        items: { type: 'object', fields: [{ name: 'drive', type: 'model', model: { id: P, version: 2 } }] },
      },
    ]),
  });
  assert.deepEqual(
    refs.map((r) => [r.kind, r.targetId, r.via, r.path, r.version]),
    [
      ['uses-model', M.replace('3333-4', '5555-4'), 'motor', '/fields/1/model', undefined],
      ['uses-model', P, 'axes[].drive', '/fields/2/items/fields/0/model', 2],
    ],
  );
});

test('a model binding refers to each topic a leaf field is bound to', () => {
  const refs = modelBindingReferences({
    id: 'b',
    model_id: M,
    topic_prefix: 'v1/line1/pump',
    leaves: JSON.stringify([
      { path: 'speed', filter: 'v1/line1/pump/speed', schema: 's', schemaVersion: 1 },
      { path: 'motor/current', filter: 'v1/line1/pump/motor/current', schema: 's', schemaVersion: 1 },
    ]),
  });
  assert.deepEqual(brief(refs), [
    'binds-topic topic:v1/line1/pump/speed via speed',
    'binds-topic topic:v1/line1/pump/motor/current via motor/current',
  ]);
  assert.deepEqual(
    modelBindingReferences({ id: 'b', model_id: M, topic_prefix: 'v1/x', leaves: '[]' }).map((r) => r.topic),
    ['v1/x/#'],
  );
});
