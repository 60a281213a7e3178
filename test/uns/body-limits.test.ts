import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { testDialects } from '../helpers/dialects.js';
import type { TestClient } from '../helpers/http-client.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';
import { createPat, unsCounts } from './uns-helpers.js';

const PUBLISH = '/api/v1/uns/data/publish';
const BODY_LIMIT = 2048;
const BATCH_BODY_LIMIT = 16384;

/** `count` records whose JSON body is about 60 bytes a record. */
const records = (count: number) =>
  Array.from({ length: count }, (_, i) => ({ topic: `v1/limits/line/t${i}`, value: i }));

for (const dialect of testDialects()) {
  describe(`UNS publish body limits [${dialect}]`, () => {
    let server: TestServer;
    let api: TestClient;

    before(async () => {
      server = await startTestServer(dialect, {
        config: { bodyLimit: BODY_LIMIT, batchBodyLimit: BATCH_BODY_LIMIT },
      });
      api = server.client.as({ token: await createPat(server.admin, ['uns:publish']), org: server.orgId });
    });
    after(() => server?.close());

    it('answers 413 naming the general body limit (MERIDIAN_BODY_LIMIT) to a single publish over it, nothing stored', async () => {
      const before = await unsCounts(server);
      const res = await api.post(PUBLISH, { topic: 'v1/limits/one/value', value: 'x'.repeat(BODY_LIMIT) });
      assert.equal(res.status, 413);
      assert.equal(res.body.error, 'payload_too_large');
      assert.equal(res.body.message, `request body exceeds the limit of ${BODY_LIMIT} bytes`);
      assert.deepEqual(await unsCounts(server), before);
    });

    it('accepts a batch larger than the general limit but within the batch limit', async () => {
      const body = { records: records(60) };
      assert.ok(JSON.stringify(body).length > BODY_LIMIT);
      const res = await api.post(`${PUBLISH}/batch`, body);
      assert.equal(res.status, 200, res.text);
    });

    it('answers 413 naming the batch limit (MERIDIAN_BATCH_BODY_LIMIT), not the general one, to a batch over it, nothing stored', async () => {
      const body = { records: records(400) };
      assert.ok(JSON.stringify(body).length > BATCH_BODY_LIMIT);
      const before = await unsCounts(server);
      const res = await api.post(`${PUBLISH}/batch`, body);
      assert.equal(res.status, 413);
      assert.equal(res.body.error, 'payload_too_large');
      assert.equal(res.body.message, `request body exceeds the limit of ${BATCH_BODY_LIMIT} bytes`);
      assert.deepEqual(await unsCounts(server), before);
    });
  });
}
