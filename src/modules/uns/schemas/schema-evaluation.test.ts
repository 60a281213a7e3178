import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Quality } from '../publishing/record-fields.js';
import { parseTopicFilter } from '../topics/topic-filter.js';
import {
  compileSchema,
  type EvaluatedRecord,
  evaluateRecord,
  type SchemaVersion,
  selectBinding,
} from './schema-evaluation.js';

const NOW_US = Date.UTC(2026, 10, 22, 12, 0, 0) * 1000;

function rec(value: EvaluatedRecord['value'], extra: Partial<EvaluatedRecord> = {}): EvaluatedRecord {
  const valueType = typeof value === 'object' ? 'object' : (typeof value as 'number' | 'string' | 'boolean');
  return { value, valueType, quality: 0, timestampUs: NOW_US, timestampDeclared: false, ...extra };
}

const temperature: SchemaVersion = {
  jsonSchema: { type: 'number', multipleOf: 0.5 },
  unit: '°C',
  minimum: -40,
  maximum: 125,
  staleAfterMs: 60_000,
};
const compiled = compileSchema(temperature);

describe('evaluateRecord type', () => {
  it('accepts a value of the schema type with no violation and unchanged quality', () => {
    assert.deepEqual(evaluateRecord(compiled, 'normal', rec(21.5), NOW_US), {
      refused: null,
      quality: 0,
      violations: [],
    });
  });

  it('refuses a value of the wrong type in normal mode (400, nothing stored)', () => {
    const result = evaluateRecord(compiled, 'normal', rec('hot'), NOW_US);
    assert.deepEqual(result.refused, {
      field: 'value',
      message: "value must be of type number for this topic's schema, not a string",
    });
    assert.deepEqual(
      result.violations.map((v) => v.kind),
      ['type'],
    );
  });

  it('refuses a fraction where the schema type is integer', () => {
    const result = evaluateRecord(
      compileSchema({ jsonSchema: { type: 'integer' } }),
      'normal',
      rec(1.5),
      NOW_US,
    );
    assert.match(result.refused?.message ?? '', /must be of type integer .* not a fractional number/);
  });

  it('accepts a whole number where the schema type is integer', () => {
    assert.equal(
      evaluateRecord(compileSchema({ jsonSchema: { type: 'integer' } }), 'normal', rec(3), NOW_US).refused,
      null,
    );
  });

  it('accepts any of several listed types', () => {
    const either = compileSchema({ jsonSchema: { type: ['number', 'string'] } });
    assert.deepEqual(
      [rec(1), rec('x'), rec(true)].map((r) => evaluateRecord(either, 'normal', r, NOW_US).refused === null),
      [true, true, false],
    );
  });

  it('checks no type when the JSON Schema has no type keyword', () => {
    const untyped = compileSchema({ jsonSchema: { maxLength: 3 } });
    assert.equal(evaluateRecord(untyped, 'normal', rec(12345), NOW_US).refused, null);
  });

  it('keeps the published quality on a refused record', () => {
    assert.equal(evaluateRecord(compiled, 'normal', rec('hot', { quality: 2 }), NOW_US).quality, 2);
  });

  it('prefixes the field for a batch record', () => {
    const result = evaluateRecord(compiled, 'normal', rec(true), NOW_US, 'records[4].');
    assert.equal(result.refused?.field, 'records[4].value');
    assert.match(result.refused?.message ?? '', /^records\[4\]\.value must be of type number/);
  });
});

describe('evaluateRecord in normal mode', () => {
  it('stores another JSON Schema violation with quality 1 and a json_schema violation', () => {
    const result = evaluateRecord(compiled, 'normal', rec(21.3), NOW_US);
    assert.equal(result.refused, null);
    assert.equal(result.quality, 1);
    assert.deepEqual(
      result.violations.map((v) => v.kind),
      ['json_schema'],
    );
    assert.match(
      result.violations[0]?.message ?? '',
      /^value does not match this topic's JSON Schema: must be multiple of 0.5/,
    );
  });

  it('reports the path inside an object value', () => {
    const objectSchema = compileSchema({
      jsonSchema: { type: 'object', properties: { rpm: { type: 'integer', maximum: 3000 } } },
    });
    const result = evaluateRecord(objectSchema, 'normal', rec({ rpm: 4000 }), NOW_US);
    assert.match(result.violations[0]?.message ?? '', /must be <= 3000 at "\/rpm"/);
  });

  it('stores a number above maximum with quality 1 and a range violation', () => {
    const result = evaluateRecord(compiled, 'normal', rec(130), NOW_US);
    assert.deepEqual(result, {
      refused: null,
      quality: 1,
      violations: [{ kind: 'range', message: 'value 130 is above the schema maximum 125' }],
    });
  });

  it('stores a number below minimum with a range violation', () => {
    assert.deepEqual(evaluateRecord(compiled, 'normal', rec(-50), NOW_US).violations, [
      { kind: 'range', message: 'value -50 is below the schema minimum -40' },
    ]);
  });

  it('treats the bounds as inclusive', () => {
    assert.deepEqual(
      [-40, 125].map((v) => evaluateRecord(compiled, 'normal', rec(v), NOW_US).violations.length),
      [0, 0],
    );
  });

  it('stores a declared timestamp older than staleAfterMs with quality 1 and a stale violation', () => {
    const old = rec(20, { timestampUs: NOW_US - 61_000_000, timestampDeclared: true });
    const result = evaluateRecord(compiled, 'normal', old, NOW_US);
    assert.equal(result.quality, 1);
    assert.deepEqual(result.violations, [
      {
        kind: 'stale',
        message: "timestamp is 61000 ms old, past the schema's stale-after threshold of 60000 ms",
      },
    ]);
  });

  it('does not call a timestamp exactly at the threshold stale', () => {
    const edge = rec(20, { timestampUs: NOW_US - 60_000_000, timestampDeclared: true });
    assert.deepEqual(evaluateRecord(compiled, 'normal', edge, NOW_US).violations, []);
  });

  it('never calls an undeclared timestamp stale', () => {
    const undeclared = rec(20, { timestampUs: NOW_US - 3_600_000_000, timestampDeclared: false });
    assert.deepEqual(evaluateRecord(compiled, 'normal', undeclared, NOW_US).violations, []);
  });

  it('does not call a future timestamp stale', () => {
    const future = rec(20, { timestampUs: NOW_US + 3_600_000_000, timestampDeclared: true });
    assert.deepEqual(evaluateRecord(compiled, 'normal', future, NOW_US).violations, []);
  });

  it('lists every violation at once', () => {
    const bad = rec(130.3, { timestampUs: NOW_US - 120_000_000, timestampDeclared: true });
    assert.deepEqual(
      evaluateRecord(compiled, 'normal', bad, NOW_US).violations.map((v) => v.kind),
      ['json_schema', 'range', 'stale'],
    );
  });

  it('never raises quality toward good: max(published, derived) for every published quality', () => {
    const cases: [Quality, number, Quality][] = [
      [0, 21.5, 0],
      [1, 21.5, 1],
      [2, 21.5, 2],
      [0, 130, 1],
      [1, 130, 1],
      [2, 130, 2],
    ];
    for (const [published, value, expected] of cases) {
      assert.equal(
        evaluateRecord(compiled, 'normal', rec(value, { quality: published }), NOW_US).quality,
        expected,
      );
    }
  });

  it('applies range checks only to numbers', () => {
    const bounded = compileSchema({ minimum: 0, maximum: 1 });
    assert.deepEqual(evaluateRecord(bounded, 'normal', rec('text'), NOW_US).violations, []);
  });

  it('evaluates nothing for an empty schema', () => {
    assert.deepEqual(evaluateRecord(compileSchema({}), 'strict', rec({ any: 1 }), NOW_US), {
      refused: null,
      quality: 0,
      violations: [],
    });
  });
});

describe('evaluateRecord in strict mode', () => {
  it('refuses a JSON Schema violation', () => {
    const result = evaluateRecord(compiled, 'strict', rec(21.3), NOW_US);
    assert.equal(result.refused?.field, 'value');
    assert.match(
      result.refused?.message ?? '',
      /does not match .* \(the topic's schema binding is strict\)$/,
    );
  });

  it('refuses an out-of-range value', () => {
    assert.equal(
      evaluateRecord(compiled, 'strict', rec(130), NOW_US).refused?.message,
      "value 130 is above the schema maximum 125 (the topic's schema binding is strict)",
    );
  });

  it('refuses a stale value, naming the timestamp', () => {
    const old = rec(20, { timestampUs: NOW_US - 61_000_000, timestampDeclared: true });
    assert.equal(evaluateRecord(compiled, 'strict', old, NOW_US).refused?.field, 'timestamp');
  });

  it('accepts a record without violations and keeps its quality', () => {
    assert.deepEqual(evaluateRecord(compiled, 'strict', rec(20, { quality: 1 }), NOW_US), {
      refused: null,
      quality: 1,
      violations: [],
    });
  });
});

describe('compileSchema', () => {
  it('reuses one compiled validator for many evaluations', () => {
    const once = compileSchema({ jsonSchema: { type: 'string', maxLength: 2 } });
    const results = ['ok', 'too long', 'ok'].map(
      (v) => evaluateRecord(once, 'normal', rec(v), NOW_US).violations.length,
    );
    assert.deepEqual(results, [0, 1, 0]);
  });

  it('checks formats from ajv-formats', () => {
    const dated = compileSchema({ jsonSchema: { type: 'string', format: 'date-time' } });
    assert.equal(
      evaluateRecord(dated, 'normal', rec('yesterday'), NOW_US).violations[0]?.kind,
      'json_schema',
    );
  });

  it('does not change the value (no coercion or defaults)', () => {
    const withDefault = compileSchema({
      jsonSchema: { type: 'object', properties: { a: { type: 'number', default: 1 } } },
    });
    const value = { b: '2' };
    evaluateRecord(withDefault, 'normal', rec(value), NOW_US);
    assert.deepEqual(value, { b: '2' });
  });
});

describe('selectBinding', () => {
  const bind = (filter: string, mode: 'normal' | 'strict') => ({
    filter: parseTopicFilter(filter, 'v1'),
    mode,
  });
  const bindings = [
    bind('v1/#', 'normal'),
    bind('v1/plant/+/temp', 'strict'),
    bind('v1/plant/line1/#', 'normal'),
  ];

  it('picks the most specific matching filter', () => {
    assert.equal(selectBinding(bindings, 'v1/plant/line1/temp')?.filter.filter, 'v1/plant/line1/#');
  });

  it('falls back to a broader filter', () => {
    assert.equal(selectBinding(bindings, 'v1/plant/line2/temp')?.filter.filter, 'v1/plant/+/temp');
  });

  it('does not depend on the order of the bindings', () => {
    assert.equal(
      selectBinding([...bindings].reverse(), 'v1/plant/line1/temp')?.filter.filter,
      'v1/plant/line1/#',
    );
  });

  it('gives null when nothing matches', () =>
    assert.equal(selectBinding(bindings.slice(1), 'v1/site/x'), null));
});

describe('patterns', () => {
  it('matches a catastrophic pattern in linear time', () => {
    const code = compileSchema({ jsonSchema: { type: 'string', pattern: '^(a+)+$' } });
    const started = performance.now();
    const result = evaluateRecord(code, 'normal', rec(`${'a'.repeat(5000)}!`), NOW_US);
    assert.ok(performance.now() - started < 1000);
    assert.deepEqual(
      result.violations.map((v) => v.kind),
      ['json_schema'],
    );
    assert.equal(evaluateRecord(code, 'normal', rec('aaaa'), NOW_US).violations.length, 0);
  });

  it('counts every value as violating a stored schema whose pattern RE2 refuses', () => {
    const stored = compileSchema({ jsonSchema: { type: 'string', pattern: '^(a)\\1$' } });
    const result = evaluateRecord(stored, 'normal', rec('aa'), NOW_US);
    assert.equal(result.violations[0]?.kind, 'json_schema');
    assert.match(result.violations[0]!.message, /not supported/);
  });
});
