import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { type PublishOptions, REMEMBERED_TOPICS } from '../publishing/publish-record.js';
import type { TopicPath } from '../topics/topic-path.js';
import { isEnvelope, MAX_MQTT_PAYLOAD_BYTES, parseMqttPayload } from './mqtt-payload.js';

const NOW_MS = Date.UTC(2026, 10, 22, 12, 0, 0);
const opts: PublishOptions = { prefix: 'v1', now: () => NOW_MS };
const TOPIC = 'v1/plant/line/temp';
const parse = (payload: string, topic = TOPIC) => parseMqttPayload(topic, Buffer.from(payload, 'utf8'), opts);

function refuses(payload: string | Buffer, field: string, message: RegExp, topic = TOPIC): void {
  const bytes = typeof payload === 'string' ? Buffer.from(payload, 'utf8') : payload;
  assert.throws(() => parseMqttPayload(topic, bytes, opts), { name: 'UnsInputError', field, message });
}

describe('parseMqttPayload bare values', () => {
  it('reads a bare number with quality 0 and the time of receipt', () => {
    const record = parse('21.5');
    assert.deepEqual(
      [
        record.topic,
        record.value,
        record.valueType,
        record.quality,
        record.timestampUs,
        record.timestampDeclared,
      ],
      [TOPIC, 21.5, 'number', 0, NOW_MS * 1000, false],
    );
  });

  it('reads a bare JSON string', () => assert.equal(parse('"on"').value, 'on'));

  it('reads a bare boolean', () => assert.equal(parse('true').value, true));

  it('reads a bare object without a value member as the value', () => {
    assert.deepEqual(parse('{"rpm":1500,"state":"run"}').value, { rpm: 1500, state: 'run' });
  });

  it('reads an object with value and another member as a bare object', () => {
    assert.deepEqual(parse('{"value":3,"unit":"bar"}').value, { value: 3, unit: 'bar' });
  });

  it('skips a UTF-8 byte order mark', () => {
    assert.equal(parseMqttPayload(TOPIC, Buffer.from('\ufeff42', 'utf8'), opts).value, 42);
  });

  it('accepts a Uint8Array as well as a Buffer', () => {
    assert.equal(parseMqttPayload(TOPIC, new TextEncoder().encode('7'), opts).value, 7);
  });

  it('refuses a bare null, naming the payload', () =>
    refuses('null', 'payload', /^payload must not be null/));

  it('refuses a bare array', () => refuses('[1,2]', 'payload', /^payload must not be an array/));

  it('refuses text that is not JSON instead of taking it as a string', () => {
    refuses('running', 'payload', /^payload must be JSON: a bare value/);
  });

  it('refuses an empty payload (a retained-message clear carries no value)', () => {
    refuses('', 'payload', /^payload must not be empty/);
  });

  it('refuses bytes that are not UTF-8', () =>
    refuses(Buffer.from([0x34, 0xff, 0x32]), 'payload', /^payload must be valid UTF-8$/));

  it('refuses a payload over the size limit before parsing it', () => {
    refuses(`"${'x'.repeat(MAX_MQTT_PAYLOAD_BYTES)}"`, 'payload', /^payload must be at most 131072 bytes/);
  });

  it('refuses a bare string over 64 KiB as JSON', () => {
    refuses(`"${'x'.repeat(70_000)}"`, 'payload', /^payload must be at most 65536 bytes as JSON/);
  });
});

describe('parseMqttPayload envelopes', () => {
  it('reads every envelope member', () => {
    const record = parse('{"value":21.5,"timestamp":"2026-11-22T10:15:30Z","quality":1,"source":"plc-7"}');
    assert.deepEqual(
      [record.value, record.timestampUs, record.timestampDeclared, record.quality, record.source],
      [21.5, Date.UTC(2026, 10, 22, 10, 15, 30) * 1000, true, 1, 'plc-7'],
    );
  });

  it('reads an envelope with only a value', () => assert.equal(parse('{"value":"on"}').value, 'on'));

  it('carries an object inside an envelope, even one that itself looks like an envelope', () => {
    assert.deepEqual(parse('{"value":{"value":3}}').value, { value: 3 });
  });

  it('refuses quality 3 in an envelope, naming quality', () => {
    refuses('{"value":1,"quality":3}', 'quality', /^quality must be the integer 0/);
  });

  it('refuses quality "0" in an envelope', () =>
    refuses('{"value":1,"quality":"0"}', 'quality', /not a string$/));

  it('refuses a malformed timestamp in an envelope', () => {
    refuses('{"value":1,"timestamp":"2026-02-30T00:00:00Z"}', 'timestamp', /date that does not exist/);
  });

  it('refuses a null value in an envelope, naming value', () =>
    refuses('{"value":null}', 'value', /^value must not be null/));

  it('refuses an array value in an envelope', () =>
    refuses('{"value":[1]}', 'value', /^value must not be an array/));
});

describe('parseMqttPayload topics', () => {
  it('refuses a topic without the prefix', () =>
    refuses('1', 'topic', /version prefix "v1"/, 'plant/line/temp'));

  it('refuses a topic with too few segments', () =>
    refuses('1', 'topic', /at least two segments/, 'v1/plant'));

  it('checks the topic before the payload', () => refuses('not json', 'topic', /empty segment/, 'v1//x'));
});

describe('isEnvelope', () => {
  it('needs a value member', () => assert.equal(isEnvelope({ quality: 1 }), false));

  it('allows only value, timestamp, quality and source', () => {
    assert.deepEqual(
      [isEnvelope({ value: 1, source: 's' }), isEnvelope({ value: 1, extra: 1 })],
      [true, false],
    );
  });

  it('is false for a bare scalar', () => assert.equal(isEnvelope(42), false));
});

describe('parseMqttPayload remembered topics', () => {
  it('parses each distinct topic once and shares a path nobody can change', () => {
    const topics = new Map<string, TopicPath>();
    const remembering: PublishOptions = { ...opts, topics };
    const first = parseMqttPayload(TOPIC, Buffer.from('1'), remembering);
    const second = parseMqttPayload(TOPIC, Buffer.from('2'), remembering);
    assert.equal(second.segments, first.segments);
    assert.equal(second.parentPaths, first.parentPaths);
    assert.deepEqual(first.parentPaths, ['v1/plant', 'v1/plant/line']);
    assert.throws(() => (first.segments as string[]).push('x'), TypeError);
    assert.throws(() => (first.parentPaths as string[]).push('x'), TypeError);
    assert.deepEqual([...topics.keys()], [TOPIC]);
  });

  it('remembers no refused topic, and at most REMEMBERED_TOPICS topics', () => {
    const topics = new Map<string, TopicPath>();
    const remembering: PublishOptions = { ...opts, topics };
    for (let i = 0; i < 2; i++) {
      assert.throws(() => parseMqttPayload('v1/only', Buffer.from('1'), remembering), { field: 'topic' });
    }
    assert.equal(topics.size, 0);
    for (let i = 0; i <= REMEMBERED_TOPICS; i++) parseMqttPayload(`v1/a/${i}`, Buffer.from('1'), remembering);
    assert.ok(topics.size <= REMEMBERED_TOPICS);
    assert.equal(
      parseMqttPayload(`v1/a/${REMEMBERED_TOPICS}`, Buffer.from('1'), remembering).topic,
      `v1/a/${REMEMBERED_TOPICS}`,
    );
  });
});
