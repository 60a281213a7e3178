import assert from 'node:assert/strict';
import test from 'node:test';
import {
  connectionReferences,
  dashboardReferences,
  distinctReferences,
  functionReferences,
  modelBindingReferences,
  modelReferences,
  pipelineReferences,
  reachableFilter,
} from './references.js';
import { topicsOverlap } from './topic-overlap.js';

const C = '11111111-1111-4111-8111-111111111111';
const F = '22222222-2222-4222-8222-222222222222';
const M = '33333333-3333-4333-8333-333333333333';
const P = '44444444-4444-4444-8444-444444444444';

const brief = (refs: ReturnType<typeof pipelineReferences>) =>
  refs.map(
    (r) =>
      `${r.kind} ${r.targetType}:${r.targetId ?? `?${r.expression}`} via ${r.via}${r.dynamic ? ' dynamic' : ''}`,
  );

test('a connection refers to nothing', () => {
  assert.deepEqual(connectionReferences({ id: C }), []);
});

test('a function belongs to its connection and publishes its UNS topic (read) or below it (subscribe)', () => {
  const read = functionReferences({
    id: F,
    connection_id: C,
    uns: JSON.stringify({ topic: 'v1/plant/temp', intervalMs: 1000 }),
  });
  assert.deepEqual(brief(read), [
    `belongs-to connection:${C} via connection`,
    'publishes topic:v1/plant/temp via uns.topic',
  ]);
  assert.equal(read[1]!.filter, false);

  const subscribe = functionReferences(
    { id: F, connection_id: C, uns: { topic: 'v1/plant/opc', items: { 'ns=2;s=Speed': 'v1/plant/speed' } } },
    'subscribe',
  );
  assert.deepEqual(brief(subscribe).slice(1), [
    'publishes topic:v1/plant/opc/# via uns.topic',
    'publishes topic:v1/plant/speed via uns.items.ns=2;s=Speed',
  ]);
  assert.equal(subscribe[1]!.filter, true);
  assert.equal(subscribe[2]!.path, '/uns/items/ns=2;s=Speed');

  // The direction given wins over the guess from intervalMs.
  const polled = functionReferences({ id: F, connection_id: C, uns: '{"topic":"v1/a"}' }, 'read');
  assert.equal(polled[1]!.topic, 'v1/a');
  assert.equal(functionReferences({ id: F, connection_id: C, uns: null }).length, 1);
});

test('a model refers to the models of its model fields, nested in objects and arrays', () => {
  const refs = modelReferences({
    id: M,
    fields: JSON.stringify([
      { name: 'speed', type: 'number' },
      { name: 'motor', type: 'model', model: { id: M.replace('3333-4', '5555-4') } },
      {
        name: 'axes',
        type: 'array',
        items: { type: 'object', fields: [{ name: 'drive', type: 'model', model: { id: P, version: 2 } }] },
      },
    ]),
  });
  assert.deepEqual(
    refs.map((r) => [r.kind, r.targetId, r.via, r.path, r.version]),
    [
      ['uses-model', M.replace('3333-4', '5555-4'), 'motor', '/fields/1/model', undefined],
      ['uses-model', P, 'axes[].drive', '/fields/2/items/fields/0/model', 2],
    ],
  );
});

test('a model binding refers to each topic a leaf field is bound to', () => {
  const refs = modelBindingReferences({
    id: 'b',
    model_id: M,
    topic_prefix: 'v1/line1/pump',
    leaves: JSON.stringify([
      { path: 'speed', filter: 'v1/line1/pump/speed', schema: 's', schemaVersion: 1 },
      { path: 'motor/current', filter: 'v1/line1/pump/motor/current', schema: 's', schemaVersion: 1 },
    ]),
  });
  assert.deepEqual(brief(refs), [
    'binds-topic topic:v1/line1/pump/speed via speed',
    'binds-topic topic:v1/line1/pump/motor/current via motor/current',
  ]);
  assert.deepEqual(
    modelBindingReferences({ id: 'b', model_id: M, topic_prefix: 'v1/x', leaves: '[]' }).map((r) => r.topic),
    ['v1/x/#'],
  );
});

test('a pipeline refers through its nodes, by the parameter names of the node contract', () => {
  const nodes = [
    { id: 'n1', name: 'Every change', type: 'trigger.uns', parameters: { filter: 'v1/plant/+/temp' } },
    { id: 'n2', name: 'Read PLC', type: 'connection.call', parameters: { connectionId: C, functionId: F } },
    { id: 'n3', name: 'Publish', type: 'uns.publish', parameters: { topic: 'v1/plant/avg' } },
    { id: 'n4', name: 'History', type: 'uns.fetch', parameters: { topic: 'v1/plant/temp', mode: 'history' } },
    { id: 'n5', name: 'Latest', type: 'uns.fetch', parameters: { topic: 'v1/plant/temp', mode: 'latest' } },
    { id: 'n6', name: 'Check', type: 'model.validate', parameters: { modelId: M } },
    { id: 'n7', name: 'Map', type: 'model.map', parameters: { modelId: M } },
    { id: 'n8', name: 'Run child', type: 'pipeline.run', parameters: { pipelineId: P, wait: true } },
    { id: 'n9', name: 'After', type: 'trigger.pipeline', parameters: { pipelineId: P } },
    {
      id: 'n10',
      name: 'On value',
      type: 'trigger.connection',
      parameters: { connectionId: C, functionId: F },
    },
    { id: 'n11', name: 'Code', type: 'code.javascript', parameters: { code: 'return 1' } },
    { id: 'n12', name: 'Hook', type: 'trigger.webhook', parameters: { method: 'POST' } },
  ];
  assert.deepEqual(brief(pipelineReferences({ id: 'p', nodes: JSON.stringify(nodes) })), [
    'subscribes topic:v1/plant/+/temp via Every change',
    `uses-connection connection:${C} via Read PLC`,
    `uses-function function:${F} via Read PLC`,
    'publishes topic:v1/plant/avg via Publish',
    'reads-history topic:v1/plant/temp via History',
    'reads-topic topic:v1/plant/temp via Latest',
    `uses-model model:${M} via Check`,
    `uses-model model:${M} via Map`,
    `runs-pipeline pipeline:${P} via Run child`,
    `triggered-by pipeline:${P} via After`,
    `uses-connection connection:${C} via On value`,
    `triggered-by function:${F} via On value`,
  ]);
  const refs = pipelineReferences({ id: 'p', nodes });
  assert.equal(refs[0]!.filter, true);
  assert.equal(refs[0]!.path, '/nodes/0/parameters/filter');
  assert.equal(refs[3]!.filter, false);
});

test('an expression reference is dynamic and unresolved; a disabled node is marked', () => {
  const refs = pipelineReferences({
    id: 'p',
    nodes: [
      { id: 'n1', name: 'Publish', type: 'uns.publish', parameters: { topic: '{{ "v1/line/" & $.line }}' } },
      {
        id: 'n2',
        name: 'Call',
        type: 'connection.call',
        parameters: { connectionId: '{{ $.c }}', functionId: F },
      },
      { id: 'n3', name: 'Off', type: 'pipeline.run', disabled: true, parameters: { pipelineId: P } },
      { id: 'n4', name: 'Empty', type: 'pipeline.run', parameters: { pipelineId: '' } },
    ],
  });
  assert.deepEqual(brief(refs), [
    'publishes topic:?{{ "v1/line/" & $.line }} via Publish dynamic',
    'uses-connection connection:?{{ $.c }} via Call dynamic',
    `uses-function function:${F} via Call`,
    `runs-pipeline pipeline:${P} via Off`,
  ]);
  assert.equal(refs[0]!.topic, undefined);
  assert.equal(refs[3]!.disabled, true);
  assert.equal(refs[2]!.disabled, undefined);
});

test('a malformed stored pipeline gives no references rather than an error', () => {
  assert.deepEqual(pipelineReferences({ id: 'p', nodes: 'not json' }), []);
  assert.deepEqual(
    pipelineReferences({ id: 'p', nodes: [null as never, { id: 'x', type: 'uns.publish' }] }),
    [],
  );
});

test('a dashboard refers to its folder, its panel queries and its segment variables', () => {
  const refs = dashboardReferences({
    id: 'd',
    folder_id: 'f1',
    definition: JSON.stringify({
      variables: [
        { name: 'line', type: 'segment', filter: 'v1/plant/+' },
        { name: 'c', type: 'custom', options: ['a'] },
      ],
      panels: [
        {
          id: 'p1',
          type: 'timeseries',
          queries: [{ topic: 'v1/plant/$line/temp' }, { filter: 'v1/plant/+/speed' }],
        },
        { id: 'p2', type: 'text' },
        { id: 'p3', type: 'stat', queries: [{ topic: 'v1/plant/$' + '{line}x/pressure' }] },
      ],
    }),
  });
  assert.deepEqual(brief(refs), [
    'in-folder folder:f1 via folder',
    'reads-topic topic:v1/plant/+ via $line',
    'reads-topic topic:v1/plant/+/temp via p1 dynamic',
    'reads-topic topic:v1/plant/+/speed via p1',
    'reads-topic topic:v1/plant/+/pressure via p3 dynamic',
  ]);
  assert.equal(refs[2]!.expression, 'v1/plant/$line/temp');
  assert.equal(refs[2]!.path, '/panels/0/queries/0/topic');
  assert.equal(dashboardReferences({ id: 'd', folder_id: null, definition: '{}' }).length, 0);
});

test('a variable anywhere in a segment makes the whole segment +', () => {
  assert.equal(reachableFilter('v1/$a/b/pre$' + '{b}post'), 'v1/+/b/+');
  assert.equal(reachableFilter('v1/a/b'), 'v1/a/b');
});

test('repeated references collapse into one', () => {
  const refs = pipelineReferences({
    id: 'p',
    nodes: [
      { id: 'n1', name: 'A', type: 'connection.call', parameters: { connectionId: C, functionId: F } },
      { id: 'n1', name: 'A', type: 'connection.call', parameters: { connectionId: C, functionId: F } },
    ],
  });
  assert.equal(distinctReferences(refs).length, 2);
});

test('topic texts overlap when one topic can match both', () => {
  const yes: [string, string][] = [
    ['v1/a/b', 'v1/a/b'],
    ['v1/a/b', 'v1/a/+'],
    ['v1/a/+', 'v1/+/b'],
    ['v1/a/#', 'v1/a'],
    ['v1/a/#', 'v1/a/b/c'],
    ['v1/+/c/#', 'v1/b/+/d'],
    ['v1/#', 'v1/+/+/+'],
  ];
  const no: [string, string][] = [
    ['v1/a/b', 'v1/a/c'],
    ['v1/a/+', 'v1/a'],
    ['v1/a/+', 'v1/a/b/c'],
    ['v1/a/#', 'v1/b'],
    ['v1/+/c', 'v1/b/d'],
    ['v1/a', 'v2/a'],
  ];
  for (const [a, b] of yes) {
    assert.equal(topicsOverlap(a, b), true, `${a} ~ ${b}`);
    assert.equal(topicsOverlap(b, a), true, `${b} ~ ${a}`);
  }
  for (const [a, b] of no) {
    assert.equal(topicsOverlap(a, b), false, `${a} !~ ${b}`);
    assert.equal(topicsOverlap(b, a), false, `${b} !~ ${a}`);
  }
});
