import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { NamespacedTopics, REMEMBERED_NAMESPACED_TOPICS } from './namespaced-topics.js';

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
