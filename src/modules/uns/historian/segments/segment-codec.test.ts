import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { decodeGorilla, encodeGorilla } from './codec/gorilla.js';
import { decimalScale, decodeNumbers, encodeNumbers } from './codec/number-column.js';
import { plantSeries } from './plant-series.js';
import { decodeSegment, encodeSegment, type SegmentCompression, type SegmentRow } from './segment-codec.js';

const T0 = Date.UTC(2026, 10, 28) * 1000;

function row(tsUs: number, valueJson: string, extra: Partial<SegmentRow> = {}): SegmentRow {
  return { tsUs, valueJson, quality: 0, source: null, receivedUs: tsUs + 5000, ...extra };
}

function roundTrips(rows: SegmentRow[]): void {
  for (const compression of ['none', 'deflate', 'brotli', 'auto'] as const) {
    assert.deepEqual(decodeSegment(encodeSegment(rows, compression)), rows, compression);
  }
}

describe('Gorilla XOR floats', () => {
  it('gives back NaN, -0, infinities, huge, tiny and subnormal doubles bit for bit', () => {
    const values = [
      1.5,
      Number.NaN,
      -0,
      0,
      Number.POSITIVE_INFINITY,
      Number.NEGATIVE_INFINITY,
      Number.MAX_VALUE,
      -Number.MAX_VALUE,
      Number.MIN_VALUE,
      2.2250738585072014e-308,
      Number.EPSILON,
      2 ** 53 + 2,
      1e300,
      1e-300,
      0.1,
      0.1,
      0.1,
      1 / 3,
      -1 / 3,
      123456.789,
    ];
    const decoded = decodeGorilla(encodeGorilla(values), values.length);
    assert.equal(decoded.length, values.length);
    for (const [i, value] of values.entries()) assert.ok(Object.is(decoded[i], value), `${i}: ${decoded[i]}`);
  });

  it('gives back any sequence of doubles bit for bit', () => {
    fc.assert(
      fc.property(fc.array(fc.double(), { maxLength: 200 }), (values) => {
        const decoded = decodeGorilla(encodeGorilla(values), values.length);
        return values.every((value, i) => Object.is(decoded[i], value));
      }),
      { numRuns: 300 },
    );
  });
});

describe('number column', () => {
  it('finds the decimal scale of readings with two decimals and of counters', () => {
    assert.equal(decimalScale([21.37, 21.4, 21, -3.05]), 2);
    assert.equal(decimalScale([1, 2, 3, 1000000]), 0);
    assert.equal(decimalScale([0.001, 5]), 3);
  });

  it('falls back to Gorilla for values without a short decimal form, -0 and integers past 2^50', () => {
    assert.equal(decimalScale([21.37, 1 / 3]), null);
    assert.equal(decimalScale([1, -0]), null);
    assert.equal(decimalScale([2 ** 53]), null);
    assert.equal(decimalScale([Number.NaN]), null);
  });

  it('gives back every number of either encoding', () => {
    for (const values of [[21.37, 21.4, 21, -3.05], [1, -0, 2 ** 60, Number.NaN], [], [42]]) {
      const decoded = Array.from(decodeNumbers(encodeNumbers(values), values.length));
      for (const [i, value] of values.entries()) assert.ok(Object.is(decoded[i], value), `${value}`);
    }
  });

  it('stores a random walk with two decimals in about a byte a value before compression', () => {
    const values = plantSeries('float', 10000, T0, 7).map((r) => Number(r.valueJson));
    const bytes = encodeNumbers(values).length / values.length;
    assert.ok(bytes < 1.6, `${bytes} bytes a value`);
  });
});

describe('segment codec', () => {
  it('gives back the JSON the historian stores for every kind of value', () => {
    roundTrips([
      row(T0, '21.37'),
      row(T0 + 1, '9007199254740992'), // past 2^53, as JSON.parse leaves it
      row(T0 + 2, '1e+21'),
      row(T0 + 3, '1.7976931348623157e+308'),
      row(T0 + 4, '5e-324'),
      row(T0 + 5, '-1.5e-7'),
      row(T0 + 6, '0'),
      row(T0 + 7, '""'),
      row(T0 + 8, '"Ω 温度 🌡 \\u0000"'),
      row(T0 + 9, 'true'),
      row(T0 + 10, 'false'),
      row(T0 + 11, 'null'),
      row(T0 + 12, '{"a":[1,2,{"b":null}],"c":"x"}'),
      row(T0 + 13, '{}'),
      row(T0 + 14, '01'), // not a number's own JSON: kept as text
      row(T0 + 15, '-0'),
    ]);
  });

  it('keeps equal timestamps, out-of-order input and its order', () => {
    roundTrips([row(T0 + 5, '1'), row(T0 + 5, '2'), row(T0 - 1_000_000, '3'), row(T0, '4'), row(T0, '4')]);
  });

  it('keeps a single value, an empty series and timestamps at the ends of the accepted range', () => {
    roundTrips([row(T0, '1')]);
    roundTrips([]);
    const first = Date.UTC(1900, 0, 1) * 1000;
    const last = Date.UTC(2200, 0, 1) * 1000 - 1;
    roundTrips([row(first, '1'), row(last, '2'), row(first, '3'), row(last, '4')]);
  });

  it('keeps qualities, sources (and their absence) and receipt times', () => {
    roundTrips([
      row(T0, '1', { quality: 2, source: 'plc-1', receivedUs: T0 - 5 }),
      row(T0 + 1000, '1', { quality: 0, source: null, receivedUs: T0 + 10 ** 12 }),
      row(T0 + 2000, '1', { quality: 1, source: '', receivedUs: T0 }),
      row(T0 + 3000, '1', { quality: 3, source: 'plc-1', receivedUs: T0 }),
    ]);
  });

  it('refuses bytes that are not a segment instead of answering wrong values', () => {
    const segment = encodeSegment([row(T0, '1'), row(T0 + 1, '"a"')], 'none');
    assert.throws(() => decodeSegment(segment.subarray(0, segment.length - 3)), /historian segment/);
    assert.throws(() => decodeSegment(Uint8Array.of(9, 0)), /unknown format/);
  });

  it('gives back any series (property)', () => {
    const valueJson = fc.oneof(
      fc.double({ noNaN: true, noDefaultInfinity: true }).map((v) => JSON.stringify(v)),
      fc.integer({ min: -1000, max: 1000 }).map((v) => JSON.stringify(v / 100)),
      fc.constantFrom('true', 'false', '"Running"', '"Idle"'),
      fc.string({ unit: 'grapheme' }).map((v) => JSON.stringify(v)),
      fc.json(),
    );
    const rows = fc.array(
      fc.record({
        tsUs: fc.oneof(
          fc.integer({ min: -2_208_988_800_000_000, max: 7_258_118_399_999_999 }),
          fc.integer({ min: T0, max: T0 + 86_400_000_000 }),
        ),
        valueJson,
        quality: fc.integer({ min: 0, max: 3 }),
        source: fc.option(fc.constantFrom('plc-1', 'opc', ''), { nil: null }),
        receivedUs: fc.integer({ min: T0, max: T0 + 10 ** 10 }),
      }),
      { maxLength: 300 },
    );
    fc.assert(
      fc.property(rows, (series) => {
        const plain = series.map((r) => ({ ...r }));
        assert.deepEqual(decodeSegment(encodeSegment(plain)), plain);
      }),
      { numRuns: 300 },
    );
  });

  it('gives back a million values', () => {
    const rows = plantSeries('float', 1_000_000, T0, 11);
    const segment = encodeSegment(rows, 'deflate');
    const decoded = decodeSegment(segment);
    assert.equal(decoded.length, rows.length);
    assert.deepEqual(decoded, rows);
  });

  it('stores a plant-like mix in a few bytes a value (figures printed)', () => {
    const day = 86_400;
    const figures: string[] = [];
    let total = 0;
    let values = 0;
    for (const kind of ['float', 'counter', 'state', 'boolean'] as const) {
      const rows = plantSeries(kind, day, T0, kind.length);
      const sizes: Record<SegmentCompression, number> = {
        none: encodeSegment(rows, 'none').length,
        deflate: encodeSegment(rows, 'deflate').length,
        brotli: encodeSegment(rows, 'brotli').length,
      };
      const best = Math.min(sizes.none, sizes.deflate, sizes.brotli);
      total += best;
      values += rows.length;
      figures.push(
        `${kind}: ${(['none', 'deflate', 'brotli'] as const).map((c) => `${c} ${(sizes[c] / day).toFixed(3)}`).join(', ')} bytes a value`,
      );
    }
    figures.push(`mix: ${(total / values).toFixed(3)} bytes a value (one segment a series a day)`);
    console.log(figures.join('\n'));
    assert.ok(total / values < 4, `${total / values} bytes a value`);
  });
});
