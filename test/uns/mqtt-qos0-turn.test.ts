import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { CommitJob } from '../../src/modules/uns/historian/historian-writer.js';
import type { PublishRecord } from '../../src/modules/uns/publishing/publish-record.js';
import { testDialects } from '../helpers/dialects.js';
import type { TestClient } from '../helpers/http-client.js';
import type { TestServer } from '../helpers/test-server.js';
import { waitUntil } from '../helpers/wait.js';
import { type MqttTestServer, startMqttTestServer } from './mqtt-test-server.js';

// Declared timestamps a millisecond apart, so that no two values share a topic and time (which replaces).
const BASE_MS = Date.now() - 3_600_000;
const envelope = (n: number) => JSON.stringify({ value: n, timestamp: new Date(BASE_MS + n).toISOString() });
/** Lies a day ahead: refused by the future-timestamp rule, after the payload was parsed. */
const fromTheFuture = (n: number) =>
  JSON.stringify({ value: n, timestamp: new Date(Date.now() + 86_400_000).toISOString() });
const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);

/** Wraps group commit: records each job's values, and fails (unwritten) every job holding a `failing` record. */
function watchCommits(server: TestServer, failing: (record: PublishRecord) => boolean = () => false) {
  const committer = server.app.uns.committer;
  const submit = committer.submit.bind(committer);
  /** Each job's records as `<last topic segment>:<value>`. */
  const jobs: string[][] = [];
  committer.submit = (job: CommitJob, size: number) => {
    jobs.push(job.records.map(({ record }) => `${record.segments.at(-1)}:${record.value}`));
    if (job.records.some((accepted) => failing(accepted.record))) {
      return Promise.reject(new Error('storage refuses the record'));
    }
    return submit(job, size);
  };
  return { jobs, restore: () => Object.assign(committer, { submit }) };
}

for (const dialect of testDialects()) {
  describe(`UNS MQTT QoS 0 values committed by turn [${dialect}]`, () => {
    let mqttServer: MqttTestServer;
    let server: TestServer;
    let api: TestClient;
    const open = () => mqttServer.open();
    /** A subscriber to `filter` and the values it receives, by topic. */
    const subscribe = async (filter: string) => {
      const seen = new Map<string, number[]>();
      const subscriber = await open();
      subscriber.on('message', (topic, payload) => {
        const list = seen.get(topic) ?? [];
        list.push((JSON.parse(payload.toString()) as { value: number }).value);
        seen.set(topic, list);
      });
      await subscriber.subscribeAsync(filter);
      return seen;
    };
    const history = async (topic: string) => {
      const from = new Date(BASE_MS - 1).toISOString();
      const res = await api.get(`/api/v1/uns/data/history?topic=${topic}&from=${from}&limit=1000`);
      assert.equal(res.status, 200);
      return (res.body.data as { value: number }[]).map((row) => row.value).sort((a, b) => a - b);
    };

    before(async () => {
      mqttServer = await startMqttTestServer(dialect);
      ({ server, api } = mqttServer);
    });
    after(() => mqttServer?.close());

    it('refuses a value among accepted ones of the same turn alone: only its client is disconnected', async () => {
      const [offender, other] = [await open(), await open()];
      for (const [client, topic] of [
        [offender, 'v1/turn/refused/a'],
        [other, 'v1/turn/refused/b'],
      ] as const) {
        await client.publishAsync(topic, envelope(0), { qos: 1 });
      }
      const seen = await subscribe('v1/turn/refused/#');
      const { jobs, restore } = watchCommits(server);
      try {
        for (const n of range(1, 20)) offender.publish('v1/turn/refused/a', envelope(n), { qos: 0 });
        offender.publish('v1/turn/refused/a', fromTheFuture(21), { qos: 0 });
        for (const n of range(1, 20)) other.publish('v1/turn/refused/b', envelope(n), { qos: 0 });
        await waitUntil('the offender is disconnected', () => (offender.connected ? null : true));
        await waitUntil('the values are relayed', () =>
          seen.get('v1/turn/refused/a')?.length === 20 && seen.get('v1/turn/refused/b')?.length === 20
            ? true
            : null,
        );
      } finally {
        restore();
      }
      assert.ok(
        jobs.some((values) => values.length > 1 && values.includes('a:20')),
        'the offender values were committed together',
      );
      assert.deepEqual(seen.get('v1/turn/refused/a'), range(1, 20), 'relayed in order');
      assert.deepEqual(seen.get('v1/turn/refused/b'), range(1, 20));
      assert.equal(other.connected, true);
      assert.deepEqual(await history('v1/turn/refused/a'), range(0, 20), 'the refused value is not stored');
      assert.deepEqual(await history('v1/turn/refused/b'), range(0, 20));
    });

    it('retries each value of a failing shared commit alone: the others are stored and relayed', async () => {
      const [publisher, other] = [await open(), await open()];
      await publisher.publishAsync('v1/turn/retried/a', envelope(0), { qos: 1 });
      await other.publishAsync('v1/turn/retried/b', envelope(0), { qos: 1 });
      const seen = await subscribe('v1/turn/retried/#');
      const { jobs, restore } = watchCommits(
        server,
        (record) => record.topic === 'v1/turn/retried/a' && record.value === 13,
      );
      try {
        for (const n of range(1, 20)) publisher.publish('v1/turn/retried/a', envelope(n), { qos: 0 });
        for (const n of range(1, 20)) other.publish('v1/turn/retried/b', envelope(n), { qos: 0 });
        await waitUntil('the values are relayed', () =>
          seen.get('v1/turn/retried/a')?.length === 19 && seen.get('v1/turn/retried/b')?.length === 20
            ? true
            : null,
        );
        await waitUntil('the publisher of the failing value is disconnected', () =>
          publisher.connected ? null : true,
        );
      } finally {
        restore();
      }
      assert.ok(
        jobs.some((values) => values.length > 1 && values.includes('a:13')),
        'the failing value was first committed with others',
      );
      assert.deepEqual(
        seen.get('v1/turn/retried/a'),
        [...range(1, 12), ...range(14, 20)],
        'relayed in order',
      );
      assert.deepEqual(seen.get('v1/turn/retried/b'), range(1, 20));
      assert.equal(other.connected, true);
      assert.deepEqual(await history('v1/turn/retried/a'), [...range(0, 12), ...range(14, 20)]);
      assert.deepEqual(await history('v1/turn/retried/b'), range(0, 20));
    });
  });
}
