import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { openHistorian } from '../../src/modules/uns/historian/historian-layout.js';
import { HistorianWriter } from '../../src/modules/uns/historian/historian-writer.js';
import { parsePublishRecord } from '../../src/modules/uns/publishing/publish-record.js';
import { testDialects } from '../helpers/dialects.js';
import type { TestClient } from '../helpers/http-client.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';
import { createPat, uniqueTopic, unsCounts } from './uns-helpers.js';

const BATCH = '/api/v1/uns/data/publish/batch';

/**
 * History writes of batches: on PostgreSQL a plain insert is tried first and a batch meeting stored
 * values falls back to the upsert. Either way the stored values must be the same.
 */
for (const dialect of testDialects()) {
  describe(`UNS history of batches, new and conflicting values [${dialect}]`, () => {
    let server: TestServer;
    let api: TestClient;

    before(async () => {
      server = await startTestServer(dialect);
      const token = await createPat(server.admin, ['uns:publish', 'uns:read']);
      api = server.client.as({ token, org: server.orgId });
    });
    after(() => server?.close());

    const publish = async (records: object[]) => {
      const res = await api.post(BATCH, { records });
      assert.equal(res.status, 200, res.text);
    };
    const history = async (topic: string) => {
      const res = await api.get(`/api/v1/uns/data/history?topic=${topic}&order=asc&limit=1000`);
      assert.equal(res.status, 200, res.text);
      return res.body.data.map((v: { timestamp: string; value: unknown }) => [v.timestamp, v.value]);
    };
    const latest = async (topic: string) =>
      (await api.get(`/api/v1/uns/data/latest?topic=${encodeURIComponent(topic)}`)).body.data;
    const at = (second: number) => new Date(Date.UTC(2026, 1, 1, 0, 0, second)).toISOString();
    const iso = (second: number) => at(second).replace('.000Z', '.000000Z');

    it('keeps text exactly: tab, newline, carriage return, backslashes, \\N, NULL, unicode', async () => {
      const texts = [
        'a\tb',
        'line1\nline2',
        'cr\r',
        '\\N',
        '\\',
        'back\\slash\\',
        'NULL',
        '\\\\N',
        'é漢\u{1F600}',
      ];
      // `NULL` alone must stay text (unquoted in an array literal it would be SQL NULL); backslashes
      // without a quote must be escaped too (a string value's JSON always holds quotes).
      const sources = ['NULL', 'C:\\plant\\N', '\\'];
      const source = (i: number) => sources[i] ?? `src ${i} \\N \\t "{NULL}" é`;
      const topics = texts.map(() => uniqueTopic('v1/newvalues/text'));
      const records = texts.flatMap((text, i) => [
        { topic: topics[i], value: text, source: source(i), timestamp: at(0) },
        { topic: topics[i], value: { text, list: [text, 'NULL'] }, timestamp: at(1) },
      ]);
      await publish(records);
      // The same records again: stored values meet them, so the second batch takes the upsert.
      await publish(records);
      for (const [i, text] of texts.entries()) {
        const res = await api.get(`/api/v1/uns/data/history?topic=${topics[i]}&order=asc`);
        assert.deepEqual(
          res.body.data.map((v: { value: unknown; source: unknown }) => [v.value, v.source]),
          [
            [text, source(i)],
            [{ text, list: [text, 'NULL'] }, null],
          ],
        );
      }
    });

    it('replaces stored values of the same topic and time and keeps the rest of the batch', async () => {
      const topic = uniqueTopic('v1/newvalues/conflict');
      const other = uniqueTopic('v1/newvalues/conflict');
      await publish([1, 2, 3, 4, 5].map((s) => ({ topic, value: `first ${s}`, timestamp: at(s) })));
      const counts = await unsCounts(server);
      await publish([
        ...[0, 3, 4, 5, 6, 7].map((s) => ({ topic, value: `second ${s}`, timestamp: at(s) })),
        { topic, value: 'second 7 again', timestamp: at(7) },
        { topic: other, value: 'new topic', timestamp: at(2) },
      ]);
      assert.deepEqual(await history(topic), [
        [iso(0), 'second 0'],
        [iso(1), 'first 1'],
        [iso(2), 'first 2'],
        [iso(3), 'second 3'],
        [iso(4), 'second 4'],
        [iso(5), 'second 5'],
        [iso(6), 'second 6'],
        [iso(7), 'second 7 again'],
      ]);
      assert.deepEqual(await history(other), [[iso(2), 'new topic']]);
      assert.equal((await unsCounts(server)).values - counts.values, 4);
      assert.equal((await latest(topic)).value, 'second 7 again');
    });

    it('never lets a conflicting backfill replace the latest value', async () => {
      const topic = uniqueTopic('v1/newvalues/backfill');
      await publish([10, 20].map((s) => ({ topic, value: s, timestamp: at(s) })));
      await publish([5, 10, 15].map((s) => ({ topic, value: -s, timestamp: at(s) })));
      assert.deepEqual(await history(topic), [
        [iso(5), -5],
        [iso(10), -10],
        [iso(15), -15],
        [iso(20), 20],
      ]);
      const value = await latest(topic);
      assert.equal(value.value, 20);
      assert.equal(value.timestamp, iso(20));
    });

    it('stores a batch spanning days, including a day long past, new and conflicting', async () => {
      const topic = uniqueTopic('v1/newvalues/days');
      const times = [
        '2019-07-14T12:00:00.000000Z',
        '2026-03-01T23:59:59.999999Z',
        '2026-03-02T00:00:00.000000Z',
      ];
      await publish(times.map((timestamp, i) => ({ topic, value: i, timestamp })));
      await publish([
        ...times.map((timestamp, i) => ({ topic, value: i + 10, timestamp })),
        { topic, value: 99, timestamp: '2026-03-03T00:00:00.500000Z' },
      ]);
      assert.deepEqual(await history(topic), [
        [times[0], 10],
        [times[1], 11],
        [times[2], 12],
        ['2026-03-03T00:00:00.500000Z', 99],
      ]);
    });

    it('stores nothing of a commit whose transaction fails, new or conflicting values', async () => {
      const writer = new HistorianWriter(server.storage, await openHistorian(server.storage));
      const stored = uniqueTopic('v1/newvalues/failed');
      await publish([{ topic: stored, value: 'kept', timestamp: at(1) }]);
      const counts = await unsCounts(server);
      const accepted = (body: object) => ({
        record: parsePublishRecord(body, { prefix: 'v1', now: Date.now }),
        quality: 0 as const,
        // A violation the table refuses (kind is NOT NULL): the last statement of the commit fails.
        violations: [{ kind: null as never, message: 'refused by the table' }],
      });
      for (const records of [
        [accepted({ topic: uniqueTopic('v1/newvalues/failed'), value: 1, timestamp: at(1) })],
        [accepted({ topic: stored, value: 'replaced', timestamp: at(1) })],
      ]) {
        await assert.rejects(
          writer.write([{ organizationId: server.orgId, records, receivedUs: Date.now() * 1000 }]),
        );
      }
      assert.deepEqual(await unsCounts(server), counts);
      assert.deepEqual(await history(stored), [[iso(1), 'kept']]);
      assert.equal((await latest(stored)).value, 'kept');
    });
  });
}
