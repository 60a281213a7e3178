import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import {
  formatRfc3339Micros,
  MAX_TIMESTAMP_US,
  MIN_TIMESTAMP_US,
  parseRfc3339Micros,
  parseRfc3339MicrosByPattern,
} from './rfc3339.js';

const BASE_MS = Date.UTC(2026, 10, 22, 10, 15, 30);

function refuses(input: unknown, message: RegExp): void {
  assert.throws(() => parseRfc3339Micros(input), { name: 'UnsInputError', field: 'timestamp', message });
}

describe('parseRfc3339Micros', () => {
  it('parses a UTC date-time with Z', () =>
    assert.equal(parseRfc3339Micros('2026-11-22T10:15:30Z'), BASE_MS * 1000));

  it('accepts lower-case t and z (RFC 3339 §5.6 note)', () => {
    assert.equal(parseRfc3339Micros('2026-11-22t10:15:30z'), BASE_MS * 1000);
  });

  it('keeps six fractional digits as microseconds', () => {
    assert.equal(parseRfc3339Micros('2026-11-22T10:15:30.123456Z'), BASE_MS * 1000 + 123_456);
  });

  it('pads a short fraction: .5 is 500000 microseconds', () => {
    assert.equal(parseRfc3339Micros('2026-11-22T10:15:30.5Z'), BASE_MS * 1000 + 500_000);
  });

  it('truncates nine fractional digits to microseconds without rounding', () => {
    assert.equal(parseRfc3339Micros('2026-11-22T10:15:30.123456999Z'), BASE_MS * 1000 + 123_456);
  });

  it('does not carry a truncated fraction into the next day', () => {
    assert.equal(parseRfc3339Micros('2026-12-31T23:59:59.999999999Z'), Date.UTC(2027, 0, 1) * 1000 - 1);
  });

  it('refuses ten fractional digits', () =>
    refuses('2026-11-22T10:15:30.1234567890Z', /must be an RFC 3339 date-time/));

  it('applies a positive offset: +01:00 is an hour earlier in UTC', () => {
    assert.equal(
      parseRfc3339Micros('2026-11-22T10:15:30.123456+01:00'),
      (BASE_MS - 3_600_000) * 1000 + 123_456,
    );
  });

  it('applies a negative offset with minutes', () => {
    assert.equal(parseRfc3339Micros('2026-11-22T05:45:30-04:30'), BASE_MS * 1000);
  });

  it('takes -00:00 (unknown local offset, §4.3) as UTC', () => {
    assert.equal(parseRfc3339Micros('2026-11-22T10:15:30-00:00'), BASE_MS * 1000);
  });

  it('accepts 29 February in a leap year', () => {
    assert.equal(parseRfc3339Micros('2024-02-29T00:00:00Z'), Date.UTC(2024, 1, 29) * 1000);
  });

  it('accepts 29 February 2000 (divisible by 400)', () => {
    assert.equal(parseRfc3339Micros('2000-02-29T00:00:00Z'), Date.UTC(2000, 1, 29) * 1000);
  });

  for (const date of [
    '2026-02-30',
    '2026-02-29',
    '2100-02-29',
    '2026-04-31',
    '2026-13-01',
    '2026-00-10',
    '2026-01-00',
  ]) {
    it(`refuses the date that does not exist: ${date}`, () => {
      refuses(`${date}T00:00:00Z`, new RegExp(`^timestamp has a date that does not exist \\(${date}\\)$`));
    });
  }

  for (const time of ['24:00:00', '23:60:00', '12:00:61']) {
    it(`refuses the time of day that does not exist: ${time}`, () => {
      refuses(`2026-11-22T${time}Z`, /has a time of day that does not exist/);
    });
  }

  it('refuses a leap second with its own message', () =>
    refuses('2016-12-31T23:59:60Z', /must not be a leap second/));

  it('refuses an offset hour over 23', () =>
    refuses('2026-11-22T10:15:30+24:00', /has an offset that does not exist/));

  it('refuses a date without a time, saying a time is needed', () => {
    refuses('2026-11-22', /^timestamp must include a time and a zone/);
  });

  for (const text of [
    '2026-11-22T10:15:30', // no zone
    '2026-11-22 10:15:30Z', // space separator
    '2026-11-22T10:15Z', // no seconds
    '2026-11-22T10:15:30+0100', // offset without colon
    '2026-11-22T10:15:30+01', // offset without minutes
    '26-11-22T10:15:30Z', // two-digit year
    '2026-1-22T10:15:30Z', // one-digit month
    '2026-11-22T10:15:30.Z', // dot without digits
    '2026-11-22T10:15:30,5Z', // comma fraction
    ' 2026-11-22T10:15:30Z', // leading space
    '2026-11-22T10:15:30Z\n', // trailing newline
    '２０２６-11-22T10:15:30Z', // full-width digits
    'yesterday',
    '',
  ]) {
    it(`refuses the malformed ${JSON.stringify(text)}`, () =>
      refuses(text, /^timestamp must be an RFC 3339 date-time/));
  }

  it('refuses a number (epoch milliseconds) as not a string', () => {
    refuses(1_764_000_000_000, /^timestamp must be an RFC 3339 string .*not a number$/);
  });

  it('refuses null', () => refuses(null, /not null$/));

  it('refuses a very long string without quoting it', () => {
    assert.throws(
      () => parseRfc3339Micros(`2026-11-22T10:15:30Z${'x'.repeat(100_000)}`),
      (error: Error) => error.message.length < 150,
    );
  });

  it('accepts the first instant of 1900', () => {
    assert.equal(parseRfc3339Micros('1900-01-01T00:00:00Z'), MIN_TIMESTAMP_US);
  });

  it('refuses an instant before 1900 reached through an offset', () => {
    refuses('1900-01-01T00:30:00+01:00', /must lie between 1900/);
  });

  it('refuses 2200 and later', () => refuses('2200-01-01T00:00:00Z', /must lie between 1900/));

  it('refuses year 0050, which Date.UTC would move to 1950', () =>
    refuses('0050-01-01T00:00:00Z', /must lie between/));

  it('keeps the largest accepted instant a safe integer', () => {
    assert.ok(Number.isSafeInteger(parseRfc3339Micros('2199-12-31T23:59:59.999999Z')));
    assert.equal(parseRfc3339Micros('2199-12-31T23:59:59.999999Z'), MAX_TIMESTAMP_US - 1);
  });

  it('names the given field', () => {
    assert.throws(() => parseRfc3339Micros('x', 'records[2].timestamp'), {
      field: 'records[2].timestamp',
      message: /^records\[2\]\.timestamp must be/,
    });
  });
});

/** What a parser makes of `text`: the value, or the message it refuses with. */
function outcome(parse: (text: unknown) => number, text: string): number | string {
  try {
    return parse(text);
  } catch (error) {
    return (error as Error).message;
  }
}

describe('parseRfc3339Micros by char codes', () => {
  // Fields drawn around and beyond their limits, so that many strings are almost valid.
  const twoDigits = fc.integer({ min: 0, max: 99 }).map((n) => String(n).padStart(2, '0'));
  const dateTime = fc
    .record({
      year: fc.constantFrom(
        '1899',
        '1900',
        '1969',
        '1970',
        '2000',
        '2024',
        '2100',
        '2199',
        '2200',
        '0099',
        '12x4',
      ),
      month: twoDigits,
      day: fc.oneof(twoDigits, fc.constantFrom('28', '29', '30', '31')),
      t: fc.constantFrom('T', 't', ' ', 'X'),
      hour: fc.oneof(twoDigits, fc.constantFrom('23', '24', '0a')),
      minute: twoDigits,
      second: fc.oneof(twoDigits, fc.constantFrom('59', '60')),
      fraction: fc.oneof(fc.constant(''), fc.stringMatching(/^\.[0-9]{0,11}$/), fc.constantFrom('.', '.1a')),
      zone: fc.oneof(
        fc.constantFrom('Z', 'z', '', 'Zz', '+00:00', '-00:00', '+1:00', '+01:0', '+0100'),
        fc.tuple(fc.constantFrom('+', '-'), twoDigits, twoDigits).map(([s, h, m]) => `${s}${h}:${m}`),
      ),
    })
    .map((f) => `${f.year}-${f.month}-${f.day}${f.t}${f.hour}:${f.minute}:${f.second}${f.fraction}${f.zone}`);

  it('reads every string exactly as the pattern does: the same value or the same refusal', () => {
    fc.assert(
      fc.property(fc.oneof(dateTime, fc.string({ maxLength: 40 })), (text) => {
        assert.deepEqual(outcome(parseRfc3339Micros, text), outcome(parseRfc3339MicrosByPattern, text));
      }),
      { numRuns: 50_000 },
    );
  });

  it('reads the first and last day of every month of the accepted range as the pattern does', () => {
    for (let year = 1900; year < 2200; year++) {
      for (let month = 1; month <= 12; month++) {
        for (const day of ['01', '28', '29', '30', '31']) {
          const text = `${year}-${String(month).padStart(2, '0')}-${day}T23:59:59.999999999-23:59`;
          assert.deepEqual(outcome(parseRfc3339Micros, text), outcome(parseRfc3339MicrosByPattern, text));
        }
      }
    }
  });
});

describe('formatRfc3339Micros', () => {
  /** The same instant written by Date#toISOString, with six fractional digits. */
  const reference = (us: number) => {
    const micros = ((us % 1_000_000) + 1_000_000) % 1_000_000;
    const iso = new Date((us - micros) / 1000).toISOString();
    return `${iso.slice(0, -5)}.${String(micros).padStart(6, '0')}Z`;
  };

  it('formats microseconds in UTC with six fractional digits', () => {
    assert.equal(formatRfc3339Micros(BASE_MS * 1000 + 1_230), '2026-11-22T10:15:30.001230Z');
  });

  it('formats runs of values within a second, and back and forth across seconds, as each alone', () => {
    const base = BASE_MS * 1000;
    // The second's text is kept between calls: a value of the next second, then of the last, must not reuse it.
    for (const us of [base, base + 999_999, base + 1_000_000, base + 5, base - 1, base - 1_000_000, base])
      assert.equal(formatRfc3339Micros(us), reference(us));
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: base - 2_000_000, max: base + 2_000_000 }), { minLength: 2 }),
        (values) => {
          for (const us of values) assert.equal(formatRfc3339Micros(us), reference(us));
        },
      ),
      { numRuns: 2_000 },
    );
  });

  it('formats an instant before 1970', () => {
    assert.equal(formatRfc3339Micros(-1), '1969-12-31T23:59:59.999999Z');
  });

  it('agrees with Date#toISOString from 1900 to 2200, at day, month, leap and year boundaries', () => {
    fc.assert(
      fc.property(fc.integer({ min: MIN_TIMESTAMP_US, max: MAX_TIMESTAMP_US - 1 }), (us) => {
        assert.equal(formatRfc3339Micros(us), reference(us));
      }),
      { numRuns: 20_000 },
    );
    // Densely within two days around a month boundary.
    const dayUs = Date.UTC(2026, 2, 29) * 1000;
    fc.assert(
      fc.property(fc.integer({ min: dayUs - 86_400_000_000, max: dayUs + 86_400_000_000 }), (us) => {
        assert.equal(formatRfc3339Micros(us), reference(us));
      }),
      { numRuns: 20_000 },
    );
    const boundaries = [
      0,
      -1000,
      Date.UTC(2000, 1, 29),
      Date.UTC(2100, 2, 1),
      Date.UTC(1999, 11, 31, 23, 59, 59),
    ];
    for (let year = 1900; year < 2200; year++) boundaries.push(Date.UTC(year, 0, 1), Date.UTC(year, 2, 1));
    for (const ms of boundaries) {
      for (const us of [ms * 1000 - 1, ms * 1000, ms * 1000 + 1])
        assert.equal(formatRfc3339Micros(us), reference(us));
    }
  });

  it('round-trips parsed timestamps', () => {
    for (const text of [
      '2026-11-22T10:15:30.123456Z',
      '1900-01-01T00:00:00.000000Z',
      '1969-07-20T20:17:40.000001Z',
    ]) {
      assert.equal(formatRfc3339Micros(parseRfc3339Micros(text)), text);
    }
  });
});
