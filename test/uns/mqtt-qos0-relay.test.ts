import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { MAX_QOS0_BACKLOG } from '../../src/modules/uns/mqtt/embedded/embedded-broker.js';
import { testDialects } from '../helpers/dialects.js';
import type { TestClient } from '../helpers/http-client.js';
import type { TestServer } from '../helpers/test-server.js';
import { type MqttTestServer, startMqttTestServer } from './mqtt-test-server.js';

async function until(condition: () => boolean | Promise<boolean>, what: string, ms = 20_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

// Declared timestamps a millisecond apart, so that no two values share a topic and time (which replaces).
const BASE_MS = Date.now() - 3_600_000;
const envelope = (n: number) => JSON.stringify({ value: n, timestamp: new Date(BASE_MS + n).toISOString() });
const publishedValue = (payload: Buffer) => (JSON.parse(payload.toString()) as { value: number }).value;

/**
 * Holds back the answers of group commit (the values are still written) until `open()`: what the broker
 * sees while storage is slow. `submitted` counts the values handed to group commit meanwhile.
 */
function gateCommits(server: TestServer) {
  const committer = server.app.uns.committer;
  const submit = committer.submit.bind(committer);
  let open!: () => void;
  const gate = new Promise<void>((resolve) => {
    open = resolve;
  });
  const state = { submitted: 0, open };
  committer.submit = (job, size) => {
    state.submitted += size;
    return submit(job, size).then(() => gate);
  };
  return { state, restore: () => Object.assign(committer, { submit }) };
}

for (const dialect of testDialects()) {
  describe(`UNS MQTT QoS 0 relay after commit [${dialect}]`, () => {
    let mqttServer: MqttTestServer;
    let server: TestServer;
    let api: TestClient;
    const open = () => mqttServer.open();

    before(async () => {
      mqttServer = await startMqttTestServer(dialect);
      ({ server, api } = mqttServer);
    });
    after(() => mqttServer?.close());

    it('keeps reading QoS 0 publishes while their commits are pending, and relays none before its commit', async () => {
      // The topic exists first, so that every publish below is an ordinary commit.
      const publisher = await open();
      await publisher.publishAsync('v1/qos0/gated/x', envelope(0), { qos: 1 });
      const subscriber = await open();
      const seen: number[] = [];
      subscriber.on('message', (_topic, payload) => seen.push(publishedValue(payload)));
      await subscriber.subscribeAsync('v1/qos0/gated/#');
      const { state, restore } = gateCommits(server);
      try {
        for (let n = 1; n <= 500; n++) publisher.publish('v1/qos0/gated/x', envelope(n), { qos: 0 });
        // Every value reaches group commit although no commit has been answered: reads were not held.
        await until(() => state.submitted === 500, 'all 500 values submitted');
        await new Promise((r) => setTimeout(r, 100));
        assert.deepEqual(seen, [], 'nothing is relayed before its commit is answered');
      } finally {
        state.open();
        restore();
      }
      await until(() => seen.length === 500, 'all 500 values relayed');
      assert.deepEqual(
        seen,
        Array.from({ length: 500 }, (_, i) => i + 1),
        'relayed once each, in the order published',
      );
      const from = new Date(BASE_MS - 1).toISOString();
      const history = await api.get(`/api/v1/uns/data/history?topic=v1/qos0/gated/x&from=${from}&limit=1000`);
      assert.equal(history.status, 200);
      assert.equal(history.body.data.length, 501);
    });

    it('relays a committed QoS 0 value to every matching subscription, and keeps a retained one for later subscribers', async () => {
      const publisher = await open();
      const exact = await open();
      const wildcard = await open();
      const received: string[] = [];
      exact.on('message', (topic, payload, packet) =>
        received.push(`exact ${topic} ${publishedValue(payload)} retain=${packet.retain}`),
      );
      wildcard.on('message', (topic, payload, packet) =>
        received.push(`wildcard ${topic} ${publishedValue(payload)} retain=${packet.retain}`),
      );
      await exact.subscribeAsync('v1/qos0/fanout/a', { qos: 1 });
      await wildcard.subscribeAsync('v1/qos0/+/#', { qos: 0 });
      await publisher.publishAsync('v1/qos0/fanout/a', envelope(1), { qos: 0 });
      await publisher.publishAsync('v1/qos0/fanout/b', envelope(2), { qos: 0, retain: true });
      await until(() => received.length === 3, 'three deliveries');
      // Delivered as published (QoS 0, not retained: a live delivery of a retained publish clears the flag).
      assert.deepEqual(received.sort(), [
        'exact v1/qos0/fanout/a 1 retain=false',
        'wildcard v1/qos0/fanout/a 1 retain=false',
        'wildcard v1/qos0/fanout/b 2 retain=false',
      ]);
      // The retained value is stored by the broker: a later subscriber gets it, flagged retained.
      const later = await open();
      const retained: string[] = [];
      later.on('message', (topic, payload, packet) =>
        retained.push(`${topic} ${publishedValue(payload)} retain=${packet.retain}`),
      );
      await later.subscribeAsync('v1/qos0/fanout/#');
      await until(() => retained.length === 1, 'the retained value');
      assert.deepEqual(retained, ['v1/qos0/fanout/b 2 retain=true']);
      const latest = await api.get('/api/v1/uns/data/latest?topic=v1/qos0/fanout/b');
      assert.equal(latest.body.data.value, 2);
    });

    it('stops reading from a publisher while the QoS 0 backlog is full, then stores and relays everything', async () => {
      const publisher = await open();
      await publisher.publishAsync('v1/qos0/backlog/x', envelope(0), { qos: 1 });
      const subscriber = await open();
      let relayed = 0;
      let last = 0;
      let inOrder = true;
      subscriber.on('message', (_topic, payload) => {
        const n = publishedValue(payload);
        if (n !== last + 1) inOrder = false;
        last = n;
        relayed++;
      });
      await subscriber.subscribeAsync('v1/qos0/backlog/#');
      const total = MAX_QOS0_BACKLOG + 5000;
      const { state, restore } = gateCommits(server);
      try {
        for (let n = 1; n <= total; n++) {
          publisher.publish('v1/qos0/backlog/x', envelope(n), { qos: 0 });
          if (n % 1000 === 0) await new Promise((r) => setImmediate(r));
        }
        await until(() => state.submitted > MAX_QOS0_BACKLOG, 'the backlog to fill');
        await new Promise((r) => setTimeout(r, 300));
        // Reading stopped with the read that crossed the limit (at most one socket read of packets more).
        assert.ok(state.submitted < total, `${state.submitted} of ${total} read while the backlog was full`);
        assert.equal(relayed, 0);
      } finally {
        state.open();
        restore();
      }
      await until(() => relayed === total, `all ${total} values relayed`, 60_000);
      assert.equal(inOrder, true, 'relayed in the order published');
      const latest = await api.get('/api/v1/uns/data/latest?topic=v1/qos0/backlog/x');
      assert.equal(latest.body.data.value, total);
    });

    it('keeps a publisher held while a subscriber reads nothing, so values wait for their relay in bounded number', async () => {
      const publisher = await open();
      const subscriber = await open();
      let relayed = 0;
      subscriber.on('message', () => relayed++);
      await subscriber.subscribeAsync('v1/qos0/stalled/#');
      // The subscriber stops reading its socket: deliveries back up, and relays wait for room.
      (subscriber.stream as unknown as { pause(): void }).pause();
      const committer = server.app.uns.committer;
      const committedBefore = committer.stats.records;
      const total = MAX_QOS0_BACKLOG + 20_000;
      const pad = 'x'.repeat(1000);
      for (let n = 1; n <= total; n++) {
        publisher.publish('v1/qos0/stalled/x', JSON.stringify({ n, pad }), { qos: 0 });
        if (n % 1000 === 0) await new Promise((r) => setImmediate(r));
      }
      let last = -1;
      await until(async () => {
        await new Promise((r) => setTimeout(r, 300));
        const now = committer.stats.records;
        const settled = now === last;
        last = now;
        return settled;
      }, 'commits to stop');
      const committed = committer.stats.records - committedBefore;
      // Reading stopped with the read that found the backlog full: committed, not relayed, bounded.
      assert.ok(committed < total, `${committed} of ${total} values read while nothing was relayed`);
      assert.ok(committed <= MAX_QOS0_BACKLOG + 5_000, `${committed} values committed ahead of their relay`);
      (subscriber.stream as unknown as { resume(): void }).resume();
      await until(() => relayed === total, `all ${total} values relayed`, 60_000);
      assert.equal(committer.stats.records - committedBefore, total);
    });
  });
}
