import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseTopicFilter } from '../topics/topic-filter.js';
import { LiveStream, SlowConsumerError } from './live-stream.js';
import type { LiveValue } from './live-values.js';

const liveValue = (topic: string, timestampUs: number, padding = 0): LiveValue => ({
  topic,
  timestampUs,
  json: JSON.stringify({ topic, value: 'x'.repeat(padding), timestamp: String(timestampUs) }),
});

function stream(maxPendingBytes = 1024 * 1024) {
  return new LiveStream({
    filter: parseTopicFilter('v1/#', 'v1'),
    heartbeatMs: 60_000,
    maxPendingBytes,
    retryMs: 2000,
  });
}

/** Reads what the stream has buffered, as the socket would once the client reads again. */
function drain(live: LiveStream): string {
  let text = '';
  for (let chunk = live.read(); chunk !== null; chunk = live.read()) text += chunk.toString();
  return text;
}

const events = (text: string, name: string) =>
  text
    .split('\n\n')
    .filter((frame) => frame.startsWith(`event: ${name}\n`))
    .map((frame) => JSON.parse(frame.slice(frame.indexOf('data: ') + 6)));

describe('live stream backpressure', () => {
  it('writes values in order while the client reads', () => {
    const live = stream();
    live.receive(liveValue('v1/a/b', 1));
    live.receive(liveValue('v1/a/c', 2));
    const text = drain(live);
    assert.ok(text.startsWith('retry: 2000\n: connected\n\n'));
    assert.deepEqual(
      events(text, 'value').map((v) => v.topic),
      ['v1/a/b', 'v1/a/c'],
    );
    live.destroy();
  });

  it('keeps only the newest value per topic while the client does not read, and says how many it dropped', () => {
    const live = stream();
    // Fill the buffer until the stream reports backpressure.
    let filler = 0;
    while (live.readableLength < live.readableHighWaterMark)
      live.receive(liveValue('v1/fill', ++filler, 1000));
    const buffered = live.readableLength;
    for (let t = 1; t <= 1000; t++) live.receive(liveValue('v1/hot', t));
    live.receive(liveValue('v1/hot', 5)); // an older backfill does not replace the newest
    live.receive(liveValue('v1/cold', 7));
    assert.equal(live.readableLength, buffered, 'nothing more was buffered while blocked');
    const text = drain(live) + drain(live);
    const coalesced = events(text, 'coalesced');
    assert.deepEqual(coalesced, [{ dropped: 1000 }]);
    const after = text.slice(text.indexOf('event: coalesced'));
    assert.deepEqual(
      events(after, 'value').map((v) => [v.topic, v.timestamp]),
      [
        ['v1/hot', '1000'],
        ['v1/cold', '7'],
      ],
    );
    live.destroy();
  });

  it('cuts a client that falls more than the limit of distinct topics behind', async () => {
    const live = stream(10_000);
    const failed = new Promise<Error>((resolve) => live.once('error', resolve));
    let topic = 0;
    while (!live.destroyed) live.receive(liveValue(`v1/t/${++topic}`, 1, 500));
    assert.ok((await failed) instanceof SlowConsumerError);
  });

  it('ends with a closed event that says why', () => {
    const live = stream();
    live.finish('the access token has been revoked');
    live.receive(liveValue('v1/a/b', 1));
    const text = drain(live);
    assert.deepEqual(events(text, 'closed'), [{ message: 'the access token has been revoked' }]);
    assert.deepEqual(events(text, 'value'), []);
  });
});
