import assert from 'node:assert/strict';
import test from 'node:test';
import { brief } from '../../../../test/helpers/references.js';
import { dashboardReferences, reachableFilter } from './dashboard-references.js';

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
