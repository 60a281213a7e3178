import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MAX_STALE_AFTER_MS, validateSchemaDefinition } from './schema-definition.js';

function refuses(input: unknown, field: string, message: RegExp): void {
  assert.throws(() => validateSchemaDefinition(input), { name: 'UnsInputError', field, message });
}

describe('validateSchemaDefinition', () => {
  it('returns a full definition unchanged', () => {
    const input = {
      jsonSchema: { type: 'number', multipleOf: 0.5 },
      unit: '°C',
      minimum: -40,
      maximum: 125,
      staleAfterMs: 60_000,
    };
    assert.deepEqual(validateSchemaDefinition(input), input);
  });

  it('accepts an empty definition (no rule at all)', () =>
    assert.deepEqual(validateSchemaDefinition({}), {}));

  it('accepts minimum equal to maximum', () => {
    assert.deepEqual(validateSchemaDefinition({ minimum: 5, maximum: 5 }), { minimum: 5, maximum: 5 });
  });

  it('accepts a schema using a format from ajv-formats', () => {
    const input = { jsonSchema: { type: 'string', format: 'date-time' } };
    assert.deepEqual(validateSchemaDefinition(input), input);
  });

  it('accepts two definitions with the same $id (each compiles on its own Ajv)', () => {
    const input = { jsonSchema: { $id: 'https://example.com/temp', type: 'number' } };
    validateSchemaDefinition(input);
    assert.deepEqual(validateSchemaDefinition(input), input);
  });

  it('refuses a body that is not an object', () =>
    refuses([], 'body', /^body must be a JSON object, not an array$/));

  it('refuses an unknown member', () =>
    refuses({ min: 1 }, 'min', /^"min" is not a known member; allowed: jsonSchema/));

  it('refuses a JSON Schema that is not an object', () =>
    refuses({ jsonSchema: true }, 'jsonSchema', /must be a JSON Schema object/));

  it('refuses a JSON Schema that does not compile', () => {
    refuses(
      { jsonSchema: { type: 'number', minimum: 'low' } },
      'jsonSchema',
      /^jsonSchema is not a valid JSON Schema: /,
    );
  });

  it('refuses a JSON Schema with an unresolvable $ref', () => {
    refuses(
      { jsonSchema: { $ref: 'https://example.com/missing.json' } },
      'jsonSchema',
      /is not a valid JSON Schema/,
    );
  });

  it('refuses an unknown type name', () =>
    refuses({ jsonSchema: { type: 'float' } }, 'jsonSchema', /type must be one of/));

  it('refuses a type that no published value can have', () => {
    refuses({ jsonSchema: { type: ['array', 'null'] } }, 'jsonSchema', /type must allow a publishable type/);
  });

  it('refuses an asynchronous schema', () =>
    refuses({ jsonSchema: { $async: true } }, 'jsonSchema', /\$async/));

  it('refuses a JSON Schema over 64 KiB', () => {
    refuses({ jsonSchema: { description: 'd'.repeat(70_000) } }, 'jsonSchema', /at most 65536 bytes/);
  });

  it('refuses minimum greater than maximum', () => {
    refuses({ minimum: 10, maximum: 1 }, 'minimum', /^minimum must not be greater than maximum \(10 > 1\)$/);
  });

  it('refuses a non-numeric maximum', () =>
    refuses({ maximum: '100' }, 'maximum', /must be a finite number, not a string/));

  it('refuses bounds when the type does not allow numbers', () => {
    refuses({ jsonSchema: { type: 'string' }, maximum: 3 }, 'maximum', /applies to numbers/);
  });

  it('accepts bounds when the type is integer', () => {
    assert.equal(validateSchemaDefinition({ jsonSchema: { type: 'integer' }, minimum: 0 }).minimum, 0);
  });

  it('refuses a unit over 32 characters', () =>
    refuses({ unit: 'u'.repeat(33) }, 'unit', /1 to 32 characters \(got 33\)/));

  it('refuses an empty unit', () => refuses({ unit: '' }, 'unit', /1 to 32 characters/));

  it('refuses a control character in the unit', () => refuses({ unit: 'm\n' }, 'unit', /control characters/));

  for (const stale of [0, -5, 1.5, '60000', null, MAX_STALE_AFTER_MS + 1]) {
    it(`refuses staleAfterMs ${JSON.stringify(stale)}`, () => {
      refuses({ staleAfterMs: stale }, 'staleAfterMs', /^staleAfterMs must be a positive integer/);
    });
  }

  it('accepts staleAfterMs of 1', () =>
    assert.equal(validateSchemaDefinition({ staleAfterMs: 1 }).staleAfterMs, 1));
});
