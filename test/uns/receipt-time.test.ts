import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { testDialects } from '../helpers/dialects.js';
import type { TestClient } from '../helpers/http-client.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';
import { createPat } from './uns-helpers.js';

// A clock that stands still: every value published without a timestamp arrives in the same millisecond.
const FROZEN_MS = Date.now();
const FROM = new Date(FROZEN_MS - 1000).toISOString();

for (const dialect of testDialects()) {
  describe(`UNS values without a declared timestamp [${dialect}]`, () => {
    let server: TestServer;
    let api: TestClient;

    before(async () => {
      server = await startTestServer(dialect, { clock: { now: () => FROZEN_MS } });
      api = server.client.as({
        token: await createPat(server.admin, ['uns:publish', 'uns:read']),
        org: server.orgId,
      });
    });
    after(() => server?.close());

    const history = async (topic: string) => {
      const res = await api.get(`/api/v1/uns/data/history?topic=${topic}&from=${FROM}&limit=100`);
      assert.equal(res.status, 200);
      return res.body.data as { value: number; timestamp: string }[];
    };

    it('stores two single publishes of one topic in the same millisecond as two values, the later one latest', async () => {
      for (const value of [1, 2]) {
        assert.equal(
          (await api.post('/api/v1/uns/data/publish', { topic: 'v1/receipt/single', value })).status,
          200,
        );
      }
      const values = await history('v1/receipt/single');
      assert.deepEqual(
        values.map((v) => v.value),
        [1, 2],
      );
      assert.notEqual(values[0]!.timestamp, values[1]!.timestamp);
      const latest = await api.get('/api/v1/uns/data/latest?topic=v1/receipt/single');
      assert.equal(latest.body.data.value, 2);
    });

    it('stores every record of a batch without timestamps, in record order', async () => {
      const records = [10, 11, 12].map((value) => ({ topic: 'v1/receipt/batch', value }));
      assert.equal((await api.post('/api/v1/uns/data/publish/batch', { records })).status, 200);
      assert.deepEqual(
        (await history('v1/receipt/batch')).map((v) => v.value),
        [10, 11, 12],
      );
    });
  });
}
