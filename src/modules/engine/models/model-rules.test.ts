import assert from 'node:assert/strict';
import test from 'node:test';
import { leafDefinition } from './model-binder.js';
import { breakingChanges, modelChangeSummary } from './model-changes.js';
import { checkFields, describeSegmentProblem, type ModelField, ModelInputError } from './model-fields.js';
import { compileModelSchema, modelJsonSchema, resolveReferences } from './model-json-schema.js';

const refused = (input: unknown) => {
  try {
    checkFields(input);
  } catch (error) {
    assert.ok(error instanceof ModelInputError);
    return error.path;
  }
  assert.fail('accepted');
};

test('a field name follows the rules of a topic segment', () => {
  assert.equal(describeSegmentProblem('pressure'), null);
  assert.equal(describeSegmentProblem('Druck °C ü'), null);
  for (const bad of ['', 'a/b', 'a+', '#', 'a\u0000', 'a\u0085', 'x'.repeat(129)])
    assert.notEqual(describeSegmentProblem(bad), null, JSON.stringify(bad));
});

test('a field name with a lookalike character or mixed scripts is refused, as a topic segment is', () => {
  assert.match(describeSegmentProblem('pump\u0435') ?? '', /^mixes Latin and Cyrillic/);
  assert.match(describeSegmentProblem('a\u2028b') ?? '', /line or paragraph separators/);
  assert.match(describeSegmentProblem('pre\u200Bssure') ?? '', /invisible format characters/);
  assert.equal(describeSegmentProblem('температура'), null);
});

test('refusals name the JSON pointer of the member at fault, at any depth', () => {
  assert.equal(
    refused([{ name: 'a', type: 'object', fields: [{ name: 'b', type: 'array', items: { type: 'x' } }] }]),
    '/fields/0/fields/0/items/type',
  );
  assert.equal(refused([{ name: 'a', type: 'number', enum: [1] }]), '/fields/0/enum');
  assert.equal(
    refused([{ name: 'a', type: 'number', constraints: { pattern: 'x' } }]),
    '/fields/0/constraints/pattern',
  );
  assert.equal(refused([{ name: 'a', type: 'model', model: { id: 'not-a-uuid' } }]), '/fields/0/model/id');
  assert.equal(refused([{ name: 'a', type: 'enum', enum: ['x', 'x'] }]), '/fields/0/enum/1');
});

test('nesting is bounded', () => {
  let field: Record<string, unknown> = { name: 'leaf', type: 'number' };
  for (let i = 0; i < 12; i++) field = { name: `n${i}`, type: 'object', fields: [field] };
  assert.match(refused([field]), /^\/fields\/0(\/fields\/0)+$/);
});

test('breaking changes: removed, retyped, tightened, made required; loosening and optional additions are compatible', () => {
  const before: ModelField[] = [
    { name: 'p', type: 'number', constraints: { min: 0, max: 10 } },
    { name: 's', type: 'enum', enum: ['a', 'b'] },
    { name: 'o', type: 'object', fields: [{ name: 'x', type: 'string' }] },
  ];
  assert.deepEqual(breakingChanges(before, before), []);
  const looser: ModelField[] = [
    { name: 'p', type: 'number', constraints: { min: -5 } },
    { name: 's', type: 'enum', enum: ['a', 'b', 'c'] },
    {
      name: 'o',
      type: 'object',
      fields: [
        { name: 'x', type: 'string' },
        { name: 'y', type: 'number' },
      ],
    },
  ];
  assert.deepEqual(breakingChanges(before, looser), []);
  const reasons = breakingChanges(before, [
    { name: 'p', type: 'number', constraints: { min: 1, max: 10 } },
    { name: 's', type: 'enum', enum: ['a'] },
    {
      name: 'o',
      type: 'object',
      fields: [
        { name: 'x', type: 'integer' },
        { name: 'z', type: 'number', required: true },
      ],
    },
  ]).map((c) => `${c.field}: ${c.reason}`);
  assert.deepEqual(reasons, [
    'p: min tightened to 1',
    's: enum values removed: "b"',
    'o/x: type changed from string to integer',
    'o/z: required field added',
  ]);
  assert.deepEqual(breakingChanges(before, before.slice(1)), [{ field: 'p', reason: 'removed' }]);
});

test('the change summary lists field paths added, changed and removed', () => {
  const base = { name: 'M', description: null, labels: [] };
  const summary = modelChangeSummary(
    {
      ...base,
      fields: [
        { name: 'a', type: 'number' },
        { name: 'o', type: 'object', fields: [{ name: 'x', type: 'number' }] },
      ],
    },
    {
      ...base,
      labels: ['l'],
      fields: [
        { name: 'a', type: 'integer' },
        { name: 'o', type: 'object', fields: [{ name: 'y', type: 'number' }] },
      ],
    },
  );
  assert.deepEqual(summary, {
    added: ['/fields/o/y'],
    removed: ['/fields/o/x'],
    changed: ['/labels', '/fields/a'],
  });
});

test('a leaf field becomes a UNS schema definition with its type, unit, limits and staleness', () => {
  assert.deepEqual(
    leafDefinition({
      name: 'p',
      type: 'number',
      unit: 'kPa',
      constraints: { min: 0, max: 5 },
      staleAfterSeconds: 2,
    }),
    { jsonSchema: { type: 'number' }, minimum: 0, maximum: 5, unit: 'kPa', staleAfterMs: 2000 },
  );
  assert.deepEqual(leafDefinition({ name: 'e', type: 'enum', enum: ['a', 1] }), {
    jsonSchema: { type: ['string', 'number'], enum: ['a', 1] },
  });
  assert.deepEqual(leafDefinition({ name: 'x', type: 'any' }), {});
});

test('the compiled model schema matches patterns with RE2 (a catastrophic pattern answers; JavaScript would not)', async () => {
  const model = {
    id: 'm',
    name: 'M',
    version: 1,
    description: null,
    fields: [{ name: 's', type: 'string', constraints: { pattern: '^(a+)+$' } }] as ModelField[],
  };
  const validate = compileModelSchema(
    modelJsonSchema(model, await resolveReferences(model, async () => undefined)),
  );
  assert.equal(validate({ s: `${'a'.repeat(5000)}!` }), false);
});
