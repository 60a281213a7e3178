import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { BATCH_MESSAGE_RECORD_LIMIT, UnsBatchError, UnsInputError } from '../uns-errors.js';
import {
  collapseDuplicateRecords,
  MAX_BATCH_RECORDS,
  type PublishOptions,
  type PublishRecord,
  parseBatch,
  parsePublishRecord,
} from './publish-record.js';
import { createReceiptClock } from './receipt-clock.js';

const NOW_MS = Date.UTC(2026, 10, 22, 12, 0, 0);
const opts: PublishOptions = { prefix: 'v1', now: () => NOW_MS };
const good = { topic: 'v1/plant/line/temp', value: 21.5 };

function refuses(body: unknown, field: string, message: RegExp): void {
  assert.throws(() => parsePublishRecord(body, opts), { name: 'UnsInputError', field, message });
}

describe('parsePublishRecord', () => {
  it('fills the defaults: time of receipt, quality 0, no source', () => {
    assert.deepEqual(parsePublishRecord(good, opts), {
      topic: 'v1/plant/line/temp',
      segments: ['v1', 'plant', 'line', 'temp'],
      parentPaths: ['v1/plant', 'v1/plant/line'],
      value: 21.5,
      valueType: 'number',
      valueJson: '21.5',
      source: null,
      timestampUs: NOW_MS * 1000,
      timestampDeclared: false,
      quality: 0,
    } satisfies PublishRecord);
  });

  it('keeps a declared timestamp, quality and source', () => {
    const record = parsePublishRecord(
      { ...good, timestamp: '2026-11-22T10:15:30.123456+01:00', quality: 2, source: 'plc-7' },
      opts,
    );
    assert.deepEqual(
      [record.timestampUs, record.timestampDeclared, record.quality, record.source],
      [Date.UTC(2026, 10, 22, 9, 15, 30) * 1000 + 123_456, true, 2, 'plc-7'],
    );
  });

  it('reads the clock only when no timestamp is declared', () => {
    let calls = 0;
    const counting = { prefix: 'v1', now: () => ++calls };
    parsePublishRecord({ ...good, timestamp: '2026-11-22T10:15:30Z' }, counting);
    assert.equal(calls, 0);
  });

  it('rounds a fractional clock reading to whole microseconds', () => {
    const record = parsePublishRecord(good, { prefix: 'v1', now: () => 1.0006 });
    assert.equal(record.timestampUs, 1001);
  });

  it('accepts an object value', () => {
    assert.equal(
      parsePublishRecord({ ...good, value: { state: 'run', rpm: 1500 } }, opts).valueType,
      'object',
    );
  });

  it('refuses a body that is not an object', () =>
    refuses([good], 'body', /^body must be a JSON object, not an array$/));

  it('refuses null as the body', () => refuses(null, 'body', /^body must be a JSON object, not null$/));

  it('refuses an unknown member and names it', () => {
    refuses(
      { ...good, unit: '°C' },
      'unit',
      /^"unit" is not a known member; allowed: topic, value, timestamp, quality, source$/,
    );
  });

  it('refuses a misspelled member before looking at the rest', () => {
    refuses({ topic: 'bad', value: null, qualty: 1 }, 'qualty', /"qualty" is not a known member/);
  });

  it('cuts a long unknown member name in the message', () => {
    assert.throws(
      () => parsePublishRecord({ ...good, ['m'.repeat(10_000)]: 1 }, opts),
      (error: UnsInputError) => error.message.length < 200 && error.field.length <= 60,
    );
  });

  it('refuses a missing topic', () => refuses({ value: 1 }, 'topic', /^topic is required$/));

  it('refuses a topic without the prefix', () =>
    refuses({ ...good, topic: 'plant/line/temp' }, 'topic', /version prefix "v1"/));

  it('refuses a topic with +', () =>
    refuses({ ...good, topic: 'v1/plant/+/temp' }, 'topic', /MQTT wildcards/));

  it('refuses a topic with #', () => refuses({ ...good, topic: 'v1/plant/#' }, 'topic', /MQTT wildcards/));

  it('refuses a topic with an empty segment', () =>
    refuses({ ...good, topic: 'v1/plant//temp' }, 'topic', /empty segment/));

  it('refuses a topic that is too deep', () => {
    refuses({ ...good, topic: `v1${'/a'.repeat(32)}` }, 'topic', /at most 32 segments/);
  });

  it('refuses a topic that is too long', () => {
    refuses({ ...good, topic: `v1/a/${'b/'.repeat(600)}c` }, 'topic', /at most 1024 bytes/);
  });

  it('refuses a missing value', () => refuses({ topic: good.topic }, 'value', /^value is required/));

  it('refuses a null value', () => refuses({ ...good, value: null }, 'value', /^value must not be null/));

  it('refuses an array value', () =>
    refuses({ ...good, value: [1, 2] }, 'value', /^value must not be an array/));

  it('refuses a malformed timestamp', () => {
    refuses({ ...good, timestamp: '22/11/2026 10:15' }, 'timestamp', /must be an RFC 3339 date-time/);
  });

  it('refuses a numeric timestamp', () =>
    refuses({ ...good, timestamp: 1_764_000_000 }, 'timestamp', /not a number/));

  it('refuses a null timestamp', () => refuses({ ...good, timestamp: null }, 'timestamp', /not null/));

  for (const quality of [3, -1, 1.5, '0', true, null]) {
    it(`refuses quality ${JSON.stringify(quality)}`, () => {
      refuses(
        { ...good, quality },
        'quality',
        /^quality must be the integer 0 \(good\), 1 \(uncertain\) or 2 \(bad\)/,
      );
    });
  }

  it('refuses a source that is not a string', () =>
    refuses({ ...good, source: 42 }, 'source', /^source must be a string/));

  it('prefixes every field with fieldPrefix', () => {
    assert.throws(
      () => parsePublishRecord({ ...good, quality: 5 }, { ...opts, fieldPrefix: 'records[7].' }),
      {
        field: 'records[7].quality',
        message: /^records\[7\]\.quality must be/,
      },
    );
  });

  it('names the record itself when a batch entry is not an object', () => {
    assert.throws(() => parsePublishRecord('x', { ...opts, fieldPrefix: 'records[2].' }), {
      field: 'records[2]',
      message: /^records\[2\] must be a JSON object, not a string$/,
    });
  });
});

describe('parseBatch', () => {
  const record = (i: number) => ({ topic: `v1/plant/m${i}`, value: i });

  it('parses every record in order', () => {
    const records = parseBatch({ records: [record(0), record(1), record(2)] }, opts);
    assert.deepEqual(
      records.map((r) => r.topic),
      ['v1/plant/m0', 'v1/plant/m1', 'v1/plant/m2'],
    );
  });

  it('gives each undeclared timestamp in a batch its own time of receipt, in record order', () => {
    const now = createReceiptClock(() => NOW_MS);
    const same = { topic: 'v1/plant/line/temp', value: 1 };
    const records = parseBatch({ records: [same, { ...same, value: 2 }, same] }, { prefix: 'v1', now });
    assert.deepEqual(
      records.map((r) => r.timestampUs),
      [NOW_MS * 1000, NOW_MS * 1000 + 1, NOW_MS * 1000 + 2],
    );
  });

  it(`accepts ${MAX_BATCH_RECORDS} records`, () => {
    const records = Array.from({ length: MAX_BATCH_RECORDS }, (_, i) => record(i));
    assert.equal(parseBatch({ records }, opts).length, MAX_BATCH_RECORDS);
  });

  it(`refuses ${MAX_BATCH_RECORDS + 1} records`, () => {
    const records = Array.from({ length: MAX_BATCH_RECORDS + 1 }, (_, i) => record(i));
    assert.throws(() => parseBatch({ records }, opts), {
      field: 'records',
      message: /at most 10000 records \(got 10001\)/,
    });
  });

  it('refuses an empty batch', () => {
    assert.throws(() => parseBatch({ records: [] }, opts), {
      field: 'records',
      message: /^records must hold at least one record$/,
    });
  });

  it('refuses a missing records member', () =>
    assert.throws(() => parseBatch({}, opts), { message: /^records is required$/ }));

  it('refuses records that is not an array', () => {
    assert.throws(() => parseBatch({ records: record(0) }, opts), {
      message: /^records must be an array, not an object$/,
    });
  });

  it('refuses an unknown top-level member', () => {
    assert.throws(() => parseBatch({ records: [record(0)], topic: 'v1/a/b' }, opts), {
      field: 'topic',
      message: /"topic" is not a known member; allowed: records$/,
    });
  });

  it('refuses a body that is not an object', () =>
    assert.throws(() => parseBatch([record(0)], opts), { field: 'body' }));

  it('collects every refused record with its index, field and message', () => {
    const records = [
      record(0),
      { topic: 'x/a/b', value: 1 },
      record(2),
      { ...record(3), quality: 3 },
      'oops',
    ];
    assert.throws(
      () => parseBatch({ records }, opts),
      (error: unknown) => {
        assert.ok(error instanceof UnsBatchError);
        assert.deepEqual(
          error.errors.map((e) => [e.index, e.field]),
          [
            [1, 'records[1].topic'],
            [3, 'records[3].quality'],
            [4, 'records[4]'],
          ],
        );
        assert.match(
          error.errors[0]?.message ?? '',
          /^records\[1\]\.topic must start with the version prefix/,
        );
        return true;
      },
    );
  });

  it('is an UnsInputError on field records whose message counts the refusals', () => {
    assert.throws(
      () => parseBatch({ records: [record(0), { topic: 'v1/a/b' }] }, opts),
      (error: unknown) => {
        assert.ok(error instanceof UnsInputError);
        assert.equal(error.field, 'records');
        assert.match(
          error.message,
          /^1 of 2 records refused, nothing stored: records\[1\]\.value is required/,
        );
        return true;
      },
    );
  });

  it(`spells out at most ${BATCH_MESSAGE_RECORD_LIMIT} refusals in the message but lists all`, () => {
    const records = Array.from({ length: 150 }, () => ({ value: 1 }));
    assert.throws(
      () => parseBatch({ records }, opts),
      (error: unknown) => {
        assert.ok(error instanceof UnsBatchError);
        assert.equal(error.errors.length, 150);
        assert.equal(error.message.match(/topic is required/g)?.length, BATCH_MESSAGE_RECORD_LIMIT);
        assert.match(error.message, /; and 50 more$/);
        return true;
      },
    );
  });

  it('lets an unexpected error through instead of reporting it as a refused record', () => {
    const exploding = {
      prefix: 'v1',
      now: () => {
        throw new RangeError('clock broken');
      },
    };
    assert.throws(() => parseBatch({ records: [record(0)] }, exploding), RangeError);
  });
});

describe('collapseDuplicateRecords', () => {
  const at = (topic: string, ts: string, value: number) =>
    parsePublishRecord({ topic, value, timestamp: ts }, opts);

  it('keeps the last record for the same topic and timestamp', () => {
    const records = [at('v1/a/b', '2026-01-01T00:00:00Z', 1), at('v1/a/b', '2026-01-01T00:00:00Z', 2)];
    assert.deepEqual(
      collapseDuplicateRecords(records).map((r) => r.value),
      [2],
    );
  });

  it('keeps records that differ in topic or timestamp, in order', () => {
    const records = [
      at('v1/a/b', '2026-01-01T00:00:00Z', 1),
      at('v1/a/c', '2026-01-01T00:00:00Z', 2),
      at('v1/a/b', '2026-01-01T00:00:00.000001Z', 3),
      at('v1/a/b', '2026-01-01T00:00:00Z', 4),
    ];
    assert.deepEqual(
      collapseDuplicateRecords(records).map((r) => r.value),
      [2, 3, 4],
    );
  });
});
