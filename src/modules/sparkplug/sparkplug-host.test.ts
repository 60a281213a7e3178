/**
 * The host application's session rules, fed with payloads encoded by Eclipse Tahu's codec
 * (`sparkplug-payload`), as an edge node would send them. Normative statements are cited by their
 * Sparkplug 3.0 TCK ids.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { decodePayload, encodePayload, type UMetric } from 'sparkplug-payload/lib/sparkplugbpayload.js';
import { SparkplugHost, type SparkplugValue } from './sparkplug-host.js';
import { parseSparkplugTopic } from './sparkplug-topic.js';

const ORG = 'org-a';
const T0 = 1_764_300_000_000;

function host(options: { debounceMs?: number } = {}) {
  let now = T0;
  const h = new SparkplugHost({
    prefix: 'v1',
    rebirthDebounceMs: options.debounceMs ?? 5000,
    now: () => now,
  });
  return { h, tick: (ms: number) => (now += ms), now: () => now };
}

function payload(seq: number | undefined, metrics: Partial<UMetric>[], timestamp?: number): Uint8Array {
  return encodePayload({ timestamp: timestamp ?? T0, seq, metrics: metrics as UMetric[] });
}

const birthMetrics: Partial<UMetric>[] = [
  { name: 'bdSeq', type: 'Int64', value: 3 },
  {
    name: 'Line/Temperature',
    alias: 1,
    type: 'Double',
    value: 21.5,
    properties: { 'Engineering Units': { type: 'String', value: 'degC' } },
  },
  { name: 'Counter', alias: 2, type: 'Int64', value: 10 },
  { name: 'Running', alias: 3, type: 'Boolean', value: true },
];

function birth(h: SparkplugHost, org = ORG, bdSeq = 3) {
  const metrics = birthMetrics.map((m) => (m.name === 'bdSeq' ? { ...m, value: bdSeq } : m));
  return h.receive(org, 'spBv1.0/Plant1/NBIRTH/Edge1', payload(0, metrics));
}

const byTopic = (values: SparkplugValue[]) => Object.fromEntries(values.map((v) => [v.topic, v]));

describe('Sparkplug topics', () => {
  it('parses node, device and STATE topics (section 4.1)', () => {
    assert.deepEqual(parseSparkplugTopic('spBv1.0/G/NDATA/E'), {
      kind: 'node',
      groupId: 'G',
      type: 'NDATA',
      edgeNodeId: 'E',
    });
    assert.deepEqual(parseSparkplugTopic('spBv1.0/G/DDATA/E/D'), {
      kind: 'device',
      groupId: 'G',
      type: 'DDATA',
      edgeNodeId: 'E',
      deviceId: 'D',
    });
    assert.deepEqual(parseSparkplugTopic('spBv1.0/STATE/meridian'), { kind: 'state', hostId: 'meridian' });
  });

  it('refuses what is not a Sparkplug topic, saying why (tck-id-intro-group-id-chars and the like)', () => {
    for (const [topic, why] of [
      ['v1/a/b', /namespace/],
      ['spBv1.0/G/NDATA', /spBv1.0\/<group_id>/],
      ['spBv1.0/G/NDATA/E/D', /no device_id/],
      ['spBv1.0/G/DDATA/E', /end in a device_id/],
      ['spBv1.0/G/XDATA/E', /unknown message type/],
      ['spBv1.0/G+/NDATA/E', /group_id/],
      ['spBv1.0/G/NDATA/', /edge_node_id/],
      ['spBv1.0/STATE/a/b', /STATE topics/],
    ] as const) {
      const parsed = parseSparkplugTopic(topic);
      assert.ok('error' in parsed, topic);
      assert.match(parsed.error, why, topic);
    }
  });
});

describe('Sparkplug host application', () => {
  it('an NBIRTH registers every metric and publishes it under v1/<group>/<node>/<metric name>; bdSeq is not a value', () => {
    const { h } = host();
    const out = birth(h);
    assert.deepEqual(out.problems, []);
    assert.equal(out.command, null);
    assert.deepEqual(
      out.values.map((v) => [v.topic, v.value, v.quality, v.timestamp]),
      [
        ['v1/Plant1/Edge1/Line/Temperature', 21.5, 0, T0],
        ['v1/Plant1/Edge1/Counter', 10, 0, T0],
        ['v1/Plant1/Edge1/Running', true, 0, T0],
      ],
    );
    const [node] = h.nodes(ORG);
    assert.equal(node!.online, true);
    assert.equal(node!.bdSeq, '3');
    assert.equal(node!.metrics, 3);
  });

  it('NDATA resolves aliases through the birth and takes names too, with each metric timestamp', () => {
    const { h } = host();
    birth(h);
    const out = h.receive(
      ORG,
      'spBv1.0/Plant1/NDATA/Edge1',
      payload(
        1,
        [
          { alias: 1, type: 'Double', value: 22.25, timestamp: T0 + 1000 },
          { name: 'Counter', type: 'Int64', value: 11 },
        ],
        T0 + 2000,
      ),
    );
    assert.deepEqual(out.problems, []);
    const values = byTopic(out.values);
    assert.equal(values['v1/Plant1/Edge1/Line/Temperature']!.value, 22.25);
    assert.equal(values['v1/Plant1/Edge1/Line/Temperature']!.timestamp, T0 + 1000);
    assert.equal(values['v1/Plant1/Edge1/Counter']!.value, 11);
    assert.equal(
      values['v1/Plant1/Edge1/Counter']!.timestamp,
      T0 + 2000,
      'the payload timestamp when the metric has none',
    );
  });

  it('gives every datatype a JSON value: integers exact or as decimal text, DataSet and Template as objects, is_null as null', () => {
    const { h } = host();
    const metrics: Partial<UMetric>[] = [
      { name: 'bdSeq', type: 'Int64', value: 0 },
      { name: 'i8', type: 'Int8', value: -7 },
      { name: 'i16', type: 'Int16', value: -300 },
      { name: 'i32', type: 'Int32', value: -70000 },
      { name: 'u8', type: 'UInt8', value: 255 },
      { name: 'u16', type: 'UInt16', value: 65535 },
      { name: 'u32', type: 'UInt32', value: 4294967295 },
      { name: 'i64', type: 'Int64', value: -42 },
      { name: 'i64big', type: 'Int64', value: '9007199254740993' as unknown as number },
      { name: 'u64', type: 'UInt64', value: '18446744073709551615' as unknown as number },
      { name: 'f', type: 'Float', value: 1.5 },
      { name: 'd', type: 'Double', value: -0.125 },
      { name: 'b', type: 'Boolean', value: false },
      { name: 's', type: 'String', value: 'Running ✓' },
      { name: 'dt', type: 'DateTime', value: T0 },
      { name: 'text', type: 'Text', value: 'a\nb' },
      { name: 'uuid', type: 'UUID', value: '0f8e1c1a-1111-4222-8333-444455556666' },
      { name: 'bytes', type: 'Bytes', value: new Uint8Array([1, 2, 255]) },
      { name: 'nothing', type: 'Double', value: null },
      {
        name: 'batch',
        type: 'DataSet',
        value: {
          numOfColumns: 2,
          columns: ['step', 'ok'],
          types: ['Int32', 'Boolean'],
          rows: [
            [1, true],
            [2, false],
          ],
        },
      },
      {
        name: 'motor',
        type: 'Template',
        value: {
          templateRef: 'Motor',
          isDefinition: false,
          metrics: [{ name: 'rpm', type: 'Int32', value: 1450 }],
          parameters: [{ name: 'site', type: 'String', value: 'P1' }],
        },
      },
    ];
    const out = h.receive(ORG, 'spBv1.0/G/NBIRTH/E', payload(0, metrics));
    assert.deepEqual(out.problems, []);
    const v = Object.fromEntries(out.values.map((x) => [x.topic.slice('v1/G/E/'.length), x.value]));
    assert.deepEqual(v, {
      i8: -7,
      i16: -300,
      i32: -70000,
      u8: 255,
      u16: 65535,
      u32: 4294967295,
      i64: -42,
      i64big: '9007199254740993',
      u64: '18446744073709551615',
      f: 1.5,
      d: -0.125,
      b: false,
      s: 'Running ✓',
      dt: T0,
      text: 'a\nb',
      uuid: '0f8e1c1a-1111-4222-8333-444455556666',
      bytes: 'AQL/',
      nothing: null,
      batch: {
        columns: ['step', 'ok'],
        types: ['Int32', 'Boolean'],
        rows: [
          [1, true],
          [2, false],
        ],
      },
      motor: {
        templateRef: 'Motor',
        isDefinition: false,
        version: null,
        metrics: { rpm: 1450 },
        parameters: { site: 'P1' },
      },
    });
  });

  it('an is_historical metric is marked historical and never becomes the value a death keeps', () => {
    const { h, tick } = host();
    birth(h);
    const out = h.receive(
      ORG,
      'spBv1.0/Plant1/NDATA/Edge1',
      payload(1, [{ alias: 1, type: 'Double', value: 5, timestamp: T0 - 60_000, isHistorical: true }]),
    );
    assert.equal(out.values[0]!.historical, true);
    assert.equal(out.values[0]!.timestamp, T0 - 60_000);
    tick(1000);
    const death = h.receive(
      ORG,
      'spBv1.0/Plant1/NDEATH/Edge1',
      payload(undefined, [{ name: 'bdSeq', type: 'Int64', value: 3 }]),
    );
    assert.equal(byTopic(death.values)['v1/Plant1/Edge1/Line/Temperature']!.value, 21.5);
  });

  it('an NDEATH whose bdSeq matches the birth marks the node and its devices offline and their metrics bad at the host time, value kept (tck-id-operational-behavior-edge-node-termination-host-action-ndeath-node-tags-stale, -devices-tags-stale)', () => {
    const { h, tick, now } = host();
    birth(h);
    h.receive(
      ORG,
      'spBv1.0/Plant1/DBIRTH/Edge1/Press4',
      payload(1, [{ name: 'Pressure', alias: 10, type: 'Float', value: 2.5 }]),
    );
    tick(5000);
    const out = h.receive(
      ORG,
      'spBv1.0/Plant1/NDEATH/Edge1',
      payload(undefined, [{ name: 'bdSeq', type: 'Int64', value: 3 }]),
    );
    assert.deepEqual(out.values.map((v) => [v.topic, v.value, v.quality, v.timestamp]).sort(), [
      ['v1/Plant1/Edge1/Counter', 10, 2, now()],
      ['v1/Plant1/Edge1/Line/Temperature', 21.5, 2, now()],
      ['v1/Plant1/Edge1/Press4/Pressure', 2.5, 2, now()],
      ['v1/Plant1/Edge1/Running', true, 2, now()],
    ]);
    const [node] = h.nodes(ORG);
    assert.equal(node!.online, false);
    assert.equal(node!.devices[0]!.online, false);
  });

  it('an NDEATH with another bdSeq (the will of an older session) changes nothing', () => {
    const { h } = host();
    birth(h, ORG, 7);
    const out = h.receive(
      ORG,
      'spBv1.0/Plant1/NDEATH/Edge1',
      payload(undefined, [{ name: 'bdSeq', type: 'Int64', value: 6 }]),
    );
    assert.deepEqual(out.values, []);
    assert.match(out.problems[0]!, /bdSeq 6 is not the session's \(7\)/);
    assert.equal(h.nodes(ORG)[0]!.online, true);
  });

  it('a DDEATH marks that device metrics bad at the DDEATH timestamp; a DBIRTH restores them', () => {
    const { h } = host();
    birth(h);
    h.receive(
      ORG,
      'spBv1.0/Plant1/DBIRTH/Edge1/Press4',
      payload(1, [{ name: 'Pressure', alias: 10, type: 'Float', value: 2.5 }]),
    );
    const death = h.receive(ORG, 'spBv1.0/Plant1/DDEATH/Edge1/Press4', payload(2, [], T0 + 9000));
    assert.deepEqual(death.values, [
      {
        topic: 'v1/Plant1/Edge1/Press4/Pressure',
        value: 2.5,
        timestamp: T0 + 9000,
        quality: 2,
        historical: false,
      },
    ]);
    const rebirth = h.receive(
      ORG,
      'spBv1.0/Plant1/DBIRTH/Edge1/Press4',
      payload(3, [{ name: 'Pressure', alias: 10, type: 'Float', value: 2.75 }], T0 + 10_000),
    );
    assert.deepEqual(
      rebirth.values.map((v) => [v.value, v.quality]),
      [[2.75, 0]],
    );
    assert.equal(h.nodes(ORG)[0]!.devices[0]!.online, true);
  });

  it('a sequence gap counts an error and asks for a rebirth with NCMD Node Control/Rebirth = true, debounced', () => {
    const { h, tick } = host({ debounceMs: 5000 });
    birth(h);
    const gap = h.receive(
      ORG,
      'spBv1.0/Plant1/NDATA/Edge1',
      payload(5, [{ alias: 2, type: 'Int64', value: 12 }]),
    );
    assert.match(gap.problems[0]!, /seq 5, expected 1/);
    assert.equal(gap.values.length, 1, 'the values of the message are still taken');
    assert.equal(gap.command!.topic, 'spBv1.0/Plant1/NCMD/Edge1');
    const command = decodePayload(gap.command!.payload);
    assert.deepEqual(
      command.metrics!.map((m) => [m.name, m.type, m.value]),
      [['Node Control/Rebirth', 'Boolean', true]],
    );
    const again = h.receive(
      ORG,
      'spBv1.0/Plant1/NDATA/Edge1',
      payload(9, [{ alias: 2, type: 'Int64', value: 13 }]),
    );
    assert.equal(again.command, null, 'within the debounce no second request');
    tick(5000);
    const later = h.receive(
      ORG,
      'spBv1.0/Plant1/NDATA/Edge1',
      payload(20, [{ alias: 2, type: 'Int64', value: 14 }]),
    );
    assert.notEqual(later.command, null);
    assert.equal(h.nodes(ORG)[0]!.seqErrors, 3);
  });

  it('seq runs 0-255 and wraps to 0 without an error (tck-id-payloads-sequence-num-incrementing)', () => {
    const { h } = host();
    birth(h);
    for (let i = 1; i <= 300; i++) {
      const out = h.receive(
        ORG,
        'spBv1.0/Plant1/NDATA/Edge1',
        payload(i % 256, [{ alias: 2, type: 'Int64', value: i }]),
      );
      assert.deepEqual(out.problems, [], `seq ${i % 256}`);
    }
    assert.equal(h.nodes(ORG)[0]!.seqErrors, 0);
  });

  it('data before a birth publishes nothing and asks for a rebirth (a host restarted: state rebuilt from the rebirth)', () => {
    const { h } = host();
    const out = h.receive(
      ORG,
      'spBv1.0/Plant1/NDATA/Edge1',
      payload(4, [{ alias: 2, type: 'Int64', value: 12 }]),
    );
    assert.deepEqual(out.values, []);
    assert.match(out.problems[0]!, /before its NBIRTH/);
    assert.equal(out.command!.topic, 'spBv1.0/Plant1/NCMD/Edge1');
    birth(h);
    const after = h.receive(
      ORG,
      'spBv1.0/Plant1/NDATA/Edge1',
      payload(1, [{ alias: 2, type: 'Int64', value: 13 }]),
    );
    assert.deepEqual(
      after.values.map((v) => [v.topic, v.value]),
      [['v1/Plant1/Edge1/Counter', 13]],
    );
  });

  it('device data before its DBIRTH asks for a rebirth', () => {
    const { h } = host();
    birth(h);
    const out = h.receive(
      ORG,
      'spBv1.0/Plant1/DDATA/Edge1/Press4',
      payload(1, [{ alias: 10, type: 'Float', value: 1 }]),
    );
    assert.deepEqual(out.values, []);
    assert.match(out.problems[0]!, /before its DBIRTH/);
    assert.notEqual(out.command, null);
  });

  it('an unknown alias asks for a rebirth; the known metrics of the message are still taken', () => {
    const { h } = host();
    birth(h);
    const out = h.receive(
      ORG,
      'spBv1.0/Plant1/NDATA/Edge1',
      payload(1, [
        { alias: 99, type: 'Int64', value: 1 },
        { alias: 2, type: 'Int64', value: 11 },
      ]),
    );
    assert.match(out.problems[0]!, /unknown metric alias 99/);
    assert.deepEqual(
      out.values.map((v) => v.value),
      [11],
    );
    assert.notEqual(out.command, null);
  });

  it('two organizations with the same group and node ids are kept apart', () => {
    const { h } = host();
    birth(h, 'org-a', 1);
    birth(h, 'org-b', 2);
    h.receive(
      'org-a',
      'spBv1.0/Plant1/NDEATH/Edge1',
      payload(undefined, [{ name: 'bdSeq', type: 'Int64', value: 1 }]),
    );
    assert.equal(h.nodes('org-a')[0]!.online, false);
    assert.equal(h.nodes('org-b')[0]!.online, true);
    assert.equal(h.nodes('org-b')[0]!.bdSeq, '2');
    h.forget('org-a');
    assert.deepEqual(h.nodes('org-a'), []);
    assert.equal(h.nodes('org-b').length, 1);
  });

  it('a payload that is not Sparkplug B is refused with a reason, not thrown', () => {
    const { h } = host();
    const out = h.receive(ORG, 'spBv1.0/Plant1/NBIRTH/Edge1', new Uint8Array([0xff, 0xff, 0xff, 0xff, 0x0f]));
    assert.deepEqual(out.values, []);
    assert.match(out.problems[0]!, /not a Sparkplug B payload/);
    assert.deepEqual(h.nodes(ORG), []);
  });
});
