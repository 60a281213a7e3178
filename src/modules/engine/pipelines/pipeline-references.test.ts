import assert from 'node:assert/strict';
import test from 'node:test';
import { brief, C, F, M, P } from '../../../../test/helpers/references.js';
import { distinctReferences } from '../../graph/edges/references.js';
import { pipelineReferences } from './pipeline-references.js';

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
