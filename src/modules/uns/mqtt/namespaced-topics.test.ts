import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ForwardedTopics, NamespacedTopics, REMEMBERED_NAMESPACED_TOPICS } from './namespaced-topics.js';

describe('NamespacedTopics', () => {
  it('prefixes a topic with its namespace, each namespace apart', () => {
    const topics = new NamespacedTopics();
    assert.equal(topics.of('o/a/', 'v1/x/y'), 'o/a/v1/x/y');
    assert.equal(topics.of('o/b/', 'v1/x/y'), 'o/b/v1/x/y');
    assert.equal(topics.of('o/a/', 'v1/x/y'), 'o/a/v1/x/y');
  });

  it('starts over when full, and answers alike afterwards', () => {
    const topics = new NamespacedTopics();
    for (let i = 0; i <= REMEMBERED_NAMESPACED_TOPICS; i++) topics.of('o/a/', `v1/x/${i}`);
    assert.equal(topics.of('o/a/', 'v1/x/0'), 'o/a/v1/x/0');
    assert.equal(
      topics.of('o/b/', `v1/x/${REMEMBERED_NAMESPACED_TOPICS}`),
      `o/b/v1/x/${REMEMBERED_NAMESPACED_TOPICS}`,
    );
  });
});

describe('ForwardedTopics', () => {
  it('gives the topic without its namespace as UTF-8 bytes, the same buffer each time', () => {
    const topics = new ForwardedTopics();
    const first = topics.of('o/a/v1/höhe/ü', 4);
    assert.deepEqual(first, Buffer.from('v1/höhe/ü', 'utf8'));
    assert.equal(topics.of('o/a/v1/höhe/ü', 4), first);
    assert.deepEqual(topics.of('o/bb/v1/höhe/ü', 5), Buffer.from('v1/höhe/ü', 'utf8'));
  });

  it('starts over when full, and answers alike afterwards', () => {
    const topics = new ForwardedTopics();
    for (let i = 0; i <= REMEMBERED_NAMESPACED_TOPICS; i++) topics.of(`o/a/v1/x/${i}`, 4);
    assert.deepEqual(topics.of('o/a/v1/x/0', 4), Buffer.from('v1/x/0'));
  });
});
