import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  MAX_SOURCE_CHARS,
  MAX_VALUE_DEPTH,
  MAX_VALUE_JSON_BYTES,
  parseQuality,
  parseSource,
  parseValue,
} from './record-fields.js';

function refusesValue(value: unknown, message: RegExp): void {
  assert.throws(() => parseValue(value), { name: 'UnsInputError', field: 'value', message });
}

function nested(depth: number): Record<string, unknown> {
  let value: Record<string, unknown> = {};
  for (let i = 1; i < depth; i++) value = { a: value };
  return value;
}

describe('parseValue', () => {
  it('accepts a number and types it', () => {
    assert.deepEqual(parseValue(21.5), { value: 21.5, valueType: 'number', valueJson: '21.5' });
  });

  it('accepts a string and keeps its JSON text quoted', () => {
    assert.deepEqual(parseValue('on'), { value: 'on', valueType: 'string', valueJson: '"on"' });
  });

  it('accepts false', () =>
    assert.deepEqual(parseValue(false), { value: false, valueType: 'boolean', valueJson: 'false' }));

  it('accepts an object holding arrays and nulls', () => {
    const value = { list: [1, null, 'x'], nested: { ok: true, none: null } };
    assert.deepEqual(parseValue(value), { value, valueType: 'object', valueJson: JSON.stringify(value) });
  });

  it('accepts an empty string and an empty object', () => {
    assert.deepEqual([parseValue('').valueType, parseValue({}).valueType], ['string', 'object']);
  });

  it('refuses a missing value as required', () => refusesValue(undefined, /^value is required;/));

  it('refuses null', () =>
    refusesValue(null, /^value must not be null; publish a number, string, boolean or JSON object$/));

  it('refuses an array', () => refusesValue([1, 2], /^value must not be an array;/));

  it('refuses an empty array', () => refusesValue([], /must not be an array/));

  for (const n of [Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY]) {
    it(`refuses the non-finite number ${n}`, () => refusesValue(n, /^value must be a finite number$/));
  }

  it('refuses a non-finite number nested in an object and says where', () => {
    refusesValue(
      { a: { b: Number.POSITIVE_INFINITY } },
      /^value must not contain a number that is not finite at value\."a"\."b"$/,
    );
  });

  it('refuses a class instance such as a Date', () =>
    refusesValue(new Date(0), /must be a number, string, boolean or JSON object, not an object/));

  it('refuses undefined nested in an object (not JSON)', () =>
    refusesValue({ a: undefined }, /something that is not JSON/));

  it('refuses NUL in a string value', () =>
    refusesValue('a\u0000b', /^value must not contain a string with the NUL character/));

  it('refuses NUL in a nested string inside an array', () => {
    refusesValue({ list: ['ok', 'a\u0000'] }, /NUL character \(U\+0000\) at value\."list"\[1\]$/);
  });

  it('refuses NUL in a member name', () =>
    refusesValue({ 'a\u0000': 1 }, /a member name with the NUL character/));

  it('refuses a lone surrogate in a string value', () =>
    refusesValue('x\ud83d', /invalid Unicode \(a lone surrogate\)/));

  it('accepts a valid surrogate pair (emoji) and other control characters such as tab', () => {
    assert.equal(parseValue('🌡\t\n').valueType, 'string');
  });

  it(`accepts nesting of ${MAX_VALUE_DEPTH} levels`, () =>
    assert.equal(parseValue(nested(MAX_VALUE_DEPTH)).valueType, 'object'));

  it(`refuses nesting of ${MAX_VALUE_DEPTH + 1} levels`, () => {
    refusesValue(nested(MAX_VALUE_DEPTH + 1), /must not contain nesting deeper than 64 levels/);
  });

  it('refuses very deep nesting without overflowing the stack', () => {
    const deep = JSON.parse(`${'['.repeat(100_000)}${']'.repeat(100_000)}`);
    refusesValue({ deep }, /nesting deeper than 64 levels/);
  });

  it('accepts a string whose JSON text is exactly 64 KiB', () => {
    assert.equal(parseValue('x'.repeat(MAX_VALUE_JSON_BYTES - 2)).valueJson.length, MAX_VALUE_JSON_BYTES);
  });

  it('refuses a string whose JSON text is one byte over 64 KiB', () => {
    refusesValue(
      'x'.repeat(MAX_VALUE_JSON_BYTES - 1),
      /^value must be at most 65536 bytes as JSON \(got 65537 or more\)$/,
    );
  });

  it('counts the size in UTF-8 bytes of the JSON text', () => {
    refusesValue('é'.repeat(40_000), /at most 65536 bytes as JSON \(got 80002/);
  });

  it('counts escapes in the JSON text', () => refusesValue('"'.repeat(40_000), /got 80002/));

  it('refuses an object over 64 KiB', () => {
    refusesValue({ a: 'x'.repeat(MAX_VALUE_JSON_BYTES) }, /at most 65536 bytes/);
  });

  it('never quotes more than 60 characters of a long member name', () => {
    assert.throws(
      () => parseValue({ ['k'.repeat(5000)]: 'a\u0000' }),
      (error: Error) => error.message.length < 250,
    );
  });

  it('names the given field', () => {
    assert.throws(() => parseValue(null, 'records[0].value'), {
      field: 'records[0].value',
      message: /^records\[0\]\.value/,
    });
  });
});

describe('parseSource', () => {
  it('gives null when absent', () => assert.equal(parseSource(undefined), null));

  it('keeps a given source', () => assert.equal(parseSource('plc-7'), 'plc-7'));

  it('refuses null (omit the member instead)', () => {
    assert.throws(() => parseSource(null), {
      field: 'source',
      message: /must be a string when present.*not null/,
    });
  });

  it('refuses a number', () =>
    assert.throws(() => parseSource(7), { field: 'source', message: /not a number/ }));

  it('refuses an empty string', () =>
    assert.throws(() => parseSource(''), { message: /^source must not be empty$/ }));

  it(`accepts ${MAX_SOURCE_CHARS} characters, counted in code points`, () => {
    assert.equal(parseSource('😀'.repeat(MAX_SOURCE_CHARS)), '😀'.repeat(MAX_SOURCE_CHARS));
  });

  it(`refuses ${MAX_SOURCE_CHARS + 1} characters`, () => {
    assert.throws(() => parseSource('s'.repeat(256)), {
      message: /^source must be at most 255 characters \(got 256\)$/,
    });
  });

  it('refuses a huge source without scanning or quoting it', () => {
    assert.throws(() => parseSource('s'.repeat(1_000_000)), {
      message: /at most 255 characters \(got 500000 or more\)/,
    });
  });

  it('refuses a control character', () => {
    assert.throws(() => parseSource('plc\n7'), { message: /^source must not contain control characters$/ });
  });

  it('refuses a lone surrogate', () =>
    assert.throws(() => parseSource('plc\udc00'), { message: /valid Unicode/ }));
});

describe('parseQuality', () => {
  it('defaults to 0 (good) when absent', () => assert.equal(parseQuality(undefined), 0));

  it('accepts exactly 0, 1 and 2', () =>
    assert.deepEqual(
      [0, 1, 2].map((q) => parseQuality(q)),
      [0, 1, 2],
    ));

  it('reads -0 as 0', () => assert.ok(Object.is(parseQuality(-0), 0)));

  for (const [input, got] of [
    [3, '3'],
    [-1, '-1'],
    [1.5, '1.5'],
    ['0', 'a string'],
    [true, 'a boolean'],
    [null, 'null'],
    [Number.NaN, 'NaN'],
    [[1], 'an array'],
  ] as const) {
    it(`refuses ${JSON.stringify(input)}`, () => {
      assert.throws(() => parseQuality(input), {
        field: 'quality',
        message: new RegExp(
          `^quality must be the integer 0 \\(good\\), 1 \\(uncertain\\) or 2 \\(bad\\), not ${got}$`,
        ),
      });
    });
  }
});
