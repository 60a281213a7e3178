import assert from 'node:assert/strict';
import test from 'node:test';
import { distinctReferences, type Reference } from './references.js';
import { topicsOverlap } from './topic-overlap.js';

test('repeated references (same kind, target and via) collapse into one, the first kept', () => {
  const ref = (via: string, targetId: string | null, expression?: string): Reference => ({
    kind: 'uses-function',
    targetType: 'function',
    targetId,
    via,
    path: '/nodes/0/parameters/functionId',
    dynamic: targetId === null,
    ...(expression ? { expression } : {}),
  });
  const first = ref('A', 'f1');
  const refs = distinctReferences([
    first,
    ref('A', 'f1'),
    ref('B', 'f1'),
    ref('A', 'f2'),
    ref('A', null, '{{ $.f }}'),
  ]);
  assert.equal(refs.length, 4);
  assert.equal(refs[0], first);
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
