import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import mqtt from 'mqtt';
import { testDialects } from '../helpers/dialects.js';
import { buildOrganization } from '../helpers/factories.js';
import { freePort } from '../helpers/free-port.js';
import type { TestClient } from '../helpers/http-client.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';
import { isValue, openSse, type SseStream } from './sse-client.js';
import { createPat } from './uns-helpers.js';

const PUBLISH = '/api/v1/uns/data/publish';
const STREAM = '/api/v1/uns/data/stream';

for (const dialect of testDialects()) {
  describe(`UNS live values over Server-Sent Events [${dialect}]`, () => {
    let server: TestServer;
    let api: TestClient;
    let token: string;
    const streams: SseStream[] = [];

    const open = async (query: string, credential: { token?: string; org?: string } = {}) => {
      const stream = await openSse(`${server.url}${STREAM}?${query}`, {
        token: credential.token ?? token,
        org: credential.org ?? server.orgId,
      });
      streams.push(stream);
      return stream;
    };
    const publish = async (topic: string, value: unknown, extra: Record<string, unknown> = {}) => {
      const res = await api.post(PUBLISH, { topic, value, ...extra });
      assert.equal(res.status, 200, res.text);
    };
    const topicsOf = (stream: SseStream) => stream.values().map((v) => v.topic);

    before(async () => {
      server = await startTestServer(dialect, {
        config: { mqttPort: await freePort(), unsStreamHeartbeat: 1 },
      });
      token = await createPat(server.admin, ['uns:publish', 'uns:read']);
      api = server.client.as({ token, org: server.orgId });
    });
    after(async () => {
      for (const stream of streams) stream.close();
      await server?.close();
    });

    it('answers text/event-stream with no-cache and no proxy buffering, and sends keep-alive comments', async () => {
      const stream = await open('filter=v1/headers/%23');
      assert.equal(stream.status, 200);
      assert.equal(stream.headers.get('content-type'), 'text/event-stream; charset=utf-8');
      assert.equal(stream.headers.get('cache-control'), 'no-cache');
      assert.equal(stream.headers.get('x-accel-buffering'), 'no');
      await stream.next((frame) => frame.comment === 'keep-alive', 'a keep-alive comment', 5000);
    });

    it('sends a value published over HTTP once committed, in the shape /latest answers', async () => {
      const stream = await open('filter=v1/single/%23');
      await publish('v1/single/a', 72.4, { source: 'plc-1', quality: 1 });
      const frame = await stream.next(isValue('v1/single/a'), 'the published value');
      const latest = await api.get('/api/v1/uns/data/latest?topic=v1/single/a');
      assert.deepEqual(JSON.parse(frame.data), latest.body.data);
      assert.deepEqual(Object.keys(JSON.parse(frame.data)), [
        'topic',
        'value',
        'timestamp',
        'quality',
        'source',
        'receivedAt',
      ]);
    });

    it('sends every matching record of a batch publish', async () => {
      const stream = await open('filter=v1/batch/%23');
      const res = await api.post(`${PUBLISH}/batch`, {
        records: [
          { topic: 'v1/batch/a', value: 1 },
          { topic: 'v1/batch/b', value: 'two' },
          { topic: 'v1/elsewhere/c', value: true },
          { topic: 'v1/batch/d', value: { state: 'running' } },
        ],
      });
      assert.equal(res.status, 200, res.text);
      await stream.next(isValue('v1/batch/d', { state: 'running' }), 'the last record of the batch');
      assert.deepEqual(topicsOf(stream), ['v1/batch/a', 'v1/batch/b', 'v1/batch/d']);
      assert.deepEqual(
        stream.values().map((v) => v.value),
        [1, 'two', { state: 'running' }],
      );
    });

    it('sends a value published over MQTT once committed', async () => {
      const stream = await open('topic=v1/mqtt/in');
      const client = await mqtt.connectAsync(`mqtt://127.0.0.1:${server.config.mqttPort}`, {
        username: server.orgId,
        password: token,
        reconnectPeriod: 0,
      });
      try {
        await client.publishAsync('v1/mqtt/in', JSON.stringify({ value: 5, source: 'device-7' }), { qos: 1 });
        const frame = await stream.next(isValue('v1/mqtt/in', 5), 'the MQTT value');
        assert.equal(JSON.parse(frame.data).source, 'device-7');
      } finally {
        await client.endAsync();
      }
    });

    it('matches + as one segment and # as any number, the parent level included', async () => {
      const plus = await open('filter=v1/match/%2B/temp');
      const hash = await open('filter=v1/match/line1/%23');
      const exact = await open('topic=v1/match/line1/temp');
      for (const topic of [
        'v1/match/line1/temp',
        'v1/match/line2/temp',
        'v1/match/line1/temp/raw',
        'v1/match/line1',
        'v1/match/line2/pressure',
        'v1/other/line1/temp',
      ]) {
        await publish(topic, 1);
      }
      await publish('v1/match/line1/temp', 'end');
      for (const stream of [plus, hash, exact]) {
        await stream.next(isValue('v1/match/line1/temp', 'end'), 'the last publish');
      }
      assert.deepEqual(topicsOf(plus), ['v1/match/line1/temp', 'v1/match/line2/temp', 'v1/match/line1/temp']);
      assert.deepEqual(topicsOf(hash), [
        'v1/match/line1/temp',
        'v1/match/line1/temp/raw',
        'v1/match/line1',
        'v1/match/line1/temp',
      ]);
      assert.deepEqual(topicsOf(exact), ['v1/match/line1/temp', 'v1/match/line1/temp']);
    });

    it("never sends another organization's values", async () => {
      const otherOrg = await buildOrganization(server);
      const mine = await open('filter=v1/%23');
      const theirs = await open('filter=v1/%23', { org: otherOrg });
      const foreign = await server.admin.inOrg(otherOrg).post(PUBLISH, { topic: 'v1/iso/secret', value: 1 });
      assert.equal(foreign.status, 200, foreign.text);
      await theirs.next(isValue('v1/iso/secret'), "the other organization's value on its own stream");
      await publish('v1/iso/mine', 2);
      await mine.next(isValue('v1/iso/mine'), 'the own value');
      assert.ok(!topicsOf(mine).includes('v1/iso/secret'));
      assert.ok(!topicsOf(theirs).includes('v1/iso/mine'));
    });

    it('sends nothing for a refused publish', async () => {
      const stream = await open('filter=v1/refused/%23');
      const batch = await api.post(`${PUBLISH}/batch`, {
        records: [
          { topic: 'v1/refused/a', value: 1 },
          { topic: 'v1/refused/b', value: null },
        ],
      });
      assert.equal(batch.status, 400);
      const future = await api.post(PUBLISH, {
        topic: 'v1/refused/c',
        value: 1,
        timestamp: new Date(Date.now() + 3_600_000).toISOString(),
      });
      assert.equal(future.status, 400);
      await publish('v1/refused/ok', 3);
      await stream.next(isValue('v1/refused/ok'), 'the accepted value');
      assert.deepEqual(topicsOf(stream), ['v1/refused/ok']);
    });

    it('sends a backfilled value older than the latest too, in the same shape', async () => {
      const stream = await open('topic=v1/backfill/a');
      await publish('v1/backfill/a', 10, { timestamp: '2026-01-02T00:00:00Z' });
      await publish('v1/backfill/a', 9, { timestamp: '2026-01-01T00:00:00Z' });
      await stream.next(isValue('v1/backfill/a', 9), 'the backfilled value');
      assert.deepEqual(
        stream.values().map((v) => [v.value, v.timestamp]),
        [
          [10, '2026-01-02T00:00:00.000000Z'],
          [9, '2026-01-01T00:00:00.000000Z'],
        ],
      );
      const latest = await api.get('/api/v1/uns/data/latest?topic=v1/backfill/a');
      assert.equal(latest.body.data.value, 10, 'the backfill did not replace the latest value');
    });

    it('coalesces for a client that does not read: the newest value per topic and how many were dropped', async () => {
      const stream = await openSse(`${server.url}${STREAM}?filter=v1/slow/%23`, {
        token,
        org: server.orgId,
        paused: true,
      });
      streams.push(stream);
      const padding = 'x'.repeat(50_000);
      let last = 0;
      // About 20 MB: more than the socket buffers of both ends hold.
      for (let batch = 0; batch < 4; batch++) {
        const records = Array.from({ length: 100 }, () => ({
          topic: 'v1/slow/hot',
          value: { n: ++last, padding },
          timestamp: new Date(Date.UTC(2026, 0, 1) + last).toISOString(),
        }));
        const res = await api.post(`${PUBLISH}/batch`, { records });
        assert.equal(res.status, 200, res.text);
      }
      await publish('v1/slow/cold', 'last');
      stream.resume();
      await stream.next(isValue('v1/slow/cold', 'last'), 'the last value after catching up', 30_000);
      const dropped = stream.frames
        .filter((frame) => frame.event === 'coalesced')
        .reduce((sum, frame) => sum + JSON.parse(frame.data).dropped, 0);
      const hot = stream.values().filter((v) => v.topic === 'v1/slow/hot');
      assert.ok(dropped > 0, 'some values were coalesced');
      assert.equal(hot.length + dropped, 400, 'every value was either sent or counted as dropped');
      assert.equal((hot.at(-1)!.value as { n: number }).n, 400, 'the newest value was kept');
    });

    it('answers 401 without or with an invalid credential, in the documented shape', async () => {
      const missing = await fetch(`${server.url}${STREAM}?filter=v1/%23`, {
        headers: { 'x-organization-id': server.orgId },
      });
      assert.equal(missing.status, 401);
      const body = (await missing.json()) as Record<string, unknown>;
      assert.equal(typeof body.message, 'string');
      assert.equal(body.error, undefined);
      const invalid = await open('filter=v1/%23', { token: 'mrd_pat_not-a-real-token' });
      assert.equal(invalid.status, 401);
      assert.equal(invalid.body?.error, undefined);
    });

    it('answers 403 insufficient_scope to a token without uns:read', async () => {
      const publishOnly = await createPat(server.admin, ['uns:publish']);
      const stream = await open('filter=v1/%23', { token: publishOnly });
      assert.equal(stream.status, 403);
      assert.equal(stream.body?.error, 'insufficient_scope');
      assert.match(String(stream.body?.message), /uns:read/);
    });

    it('answers 422 without an organization, and 400 bad_request for a bad or missing filter', async () => {
      const noOrg = await openSse(`${server.url}${STREAM}?filter=v1/%23`, { token });
      assert.equal(noOrg.status, 422);
      assert.equal(noOrg.body?.error, 'missing_organization');
      for (const query of [
        'filter=v1/a%23',
        'filter=other/%23',
        'filter=v1/%23/a',
        'topic=v1/a/%2B',
        'topic=v1/a&filter=v1/%23',
        '',
        'filter=v1/%23&extra=1',
      ]) {
        const stream = await open(query);
        assert.equal(stream.status, 400, query);
        assert.equal(stream.body?.error, 'bad_request', query);
        assert.equal(typeof stream.body?.message, 'string');
      }
    });
  });

  describe(`UNS live values: stream limit and shutdown [${dialect}]`, () => {
    let server: TestServer;
    let token: string;
    let closed = false;

    before(async () => {
      server = await startTestServer(dialect, { config: { unsStreamMax: 2 } });
      token = await createPat(server.admin, ['uns:read']);
    });
    after(async () => {
      if (!closed) await server?.close();
    });

    const open = () => openSse(`${server.url}${STREAM}?filter=v1/%23`, { token, org: server.orgId });

    it('answers 503 unavailable with Retry-After beyond MERIDIAN_UNS_STREAM_MAX, and frees a slot on close', async () => {
      const first = await open();
      const second = await open();
      assert.equal(first.status, 200);
      assert.equal(second.status, 200);
      const third = await open();
      assert.equal(third.status, 503);
      assert.equal(third.body?.error, 'unavailable');
      assert.match(String(third.body?.message), /MERIDIAN_UNS_STREAM_MAX/);
      assert.ok(Number(third.headers.get('retry-after')) >= 1);
      first.close();
      let again: SseStream | undefined;
      for (let attempt = 0; attempt < 100 && again?.status !== 200; attempt++) {
        await new Promise((resolve) => setTimeout(resolve, 20));
        again = await open();
      }
      assert.equal(again?.status, 200, 'a slot was freed when a client went away');
      second.close();
      again?.close();
    });

    it('ends open streams with a reason when the server shuts down', async () => {
      await new Promise((resolve) => setTimeout(resolve, 100));
      const stream = await open();
      assert.equal(stream.status, 200);
      closed = true;
      const closing = server.close();
      const frame = await stream.next((f) => f.event === 'closed', 'the closed event');
      assert.match(JSON.parse(frame.data).message, /shutting down/);
      await stream.ended;
      await closing;
    });
  });
}
