import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Ajv } from 'ajv';
import { compileSafeRegExp, safeRegExpEngine, UnsafePatternError } from './safe-regexp.js';

test('a catastrophic pattern answers a long input in linear time', () => {
  const re = compileSafeRegExp('^(a+)+$');
  const started = performance.now();
  assert.equal(re.test(`${'a'.repeat(5000)}!`), false);
  assert.equal(re.test('a'.repeat(5000)), true);
  // RegExp would take years on 5,000 characters; RE2 is linear. Generous bound for a noisy machine.
  assert.ok(performance.now() - started < 1000);
});

test('patterns match anywhere unless anchored, as in JSON Schema', () => {
  assert.equal(compileSafeRegExp('b+').test('abbbc'), true);
  assert.equal(compileSafeRegExp('^b+$').test('abbbc'), false);
  assert.equal(compileSafeRegExp('^\\d{3}-[A-Z]+$').test('123-ABC'), true);
  assert.equal(compileSafeRegExp('^\\p{L}+$', 'u').test('Ölkühler'), true);
  assert.equal(compileSafeRegExp('^abc$', 'i').test('ABC'), true);
});

test('back-references and look-around are refused with the pattern named', () => {
  assert.throws(() => compileSafeRegExp('(a)\\1'), UnsafePatternError);
  assert.throws(() => compileSafeRegExp('a(?=b)'), /is not supported/);
});

test('Ajv uses the engine for pattern and patternProperties', () => {
  const ajv = new Ajv({ code: { regExp: safeRegExpEngine } });
  const validate = ajv.compile({ type: 'string', pattern: '^(a+)+$' });
  assert.equal(validate(`${'a'.repeat(40)}!`), false);
  assert.equal(validate('aaaa'), true);
  assert.throws(() => ajv.compile({ type: 'string', pattern: '(x)\\1' }), UnsafePatternError);
});

test('Ajv keeps the patterns of one instance apart (each compiled pattern has its own key)', () => {
  const ajv = new Ajv({ code: { regExp: safeRegExpEngine } });
  const first = ajv.compile({ type: 'string', pattern: '^[^#]*#?$' });
  const second = ajv.compile({ type: 'string', pattern: '^[A-Z]{2}[0-9]+$' });
  assert.equal(first('ab1'), true);
  assert.equal(second('ab1'), false);
  assert.equal(second('AB1'), true);
});
