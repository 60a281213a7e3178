import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { diffJson, pointerToken } from './json-diff.js';

describe('diffJson', () => {
  it('answers no change for equal documents, key order aside', () => {
    assert.deepEqual(diffJson({ a: 1, b: [1, { c: 'x' }] }, { b: [1, { c: 'x' }], a: 1 }), []);
  });

  it('names added, removed and changed members by JSON pointer with the values before and after', () => {
    assert.deepEqual(diffJson({ a: 1, b: 2, nested: { x: true } }, { a: 1, c: 3, nested: { x: false } }), [
      { path: '/b', kind: 'removed', from: 2 },
      { path: '/nested/x', kind: 'changed', from: true, to: false },
      { path: '/c', kind: 'added', to: 3 },
    ]);
  });

  it('matches array items by their name, so an insertion is one added item', () => {
    const before = {
      fields: [
        { name: 'speed', type: 'number' },
        { name: 'state', type: 'string' },
      ],
    };
    const after = {
      fields: [
        { name: 'temperature', type: 'number' },
        { name: 'speed', type: 'number' },
        { name: 'state', type: 'enum' },
      ],
    };
    assert.deepEqual(diffJson(before, after), [
      { path: '/fields/2/type', kind: 'changed', from: 'string', to: 'enum' },
      { path: '/fields/0', kind: 'added', to: { name: 'temperature', type: 'number' } },
    ]);
  });

  it('compares arrays without identities position by position', () => {
    assert.deepEqual(diffJson([1, 2, 3], [1, 5]), [
      { path: '/1', kind: 'changed', from: 2, to: 5 },
      { path: '/2', kind: 'removed', from: 3 },
    ]);
  });

  it('treats a change of kind (object to array, number to string) as one change at that path', () => {
    assert.deepEqual(diffJson({ v: { a: 1 } }, { v: [1] }), [
      { path: '/v', kind: 'changed', from: { a: 1 }, to: [1] },
    ]);
    assert.deepEqual(diffJson({ v: 1 }, { v: '1' }), [{ path: '/v', kind: 'changed', from: 1, to: '1' }]);
  });

  it('escapes "/" and "~" in member names (RFC 6901)', () => {
    assert.equal(pointerToken('a/b~c'), 'a~1b~0c');
    assert.deepEqual(diffJson({ 'a/b': 1 }, { 'a/b': 2 }), [
      { path: '/a~1b', kind: 'changed', from: 1, to: 2 },
    ]);
  });
});
