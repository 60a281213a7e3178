import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { createTestDatabase, testDialects } from '../helpers/dialects.js';
import { freePort } from '../helpers/free-port.js';
import type { TestClient } from '../helpers/http-client.js';
import { runMeridian } from '../helpers/process.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';
import { createPat, unsCounts } from './uns-helpers.js';

const DAY_MS = 86_400_000;

for (const dialect of testDialects()) {
  describe(`UNS historian retention and layout [${dialect}]`, () => {
    let server: TestServer;
    let api: TestClient;

    before(async () => {
      server = await startTestServer(dialect);
      api = server.client.as({
        token: await createPat(server.admin, ['uns:publish', 'uns:read']),
        org: server.orgId,
      });
    });
    after(() => server?.close());

    it('keeps the historian where the settings say: a file beside meridian.db, or daily partitions', async () => {
      const res = await server.admin.get('/api/v1/system/uns/settings');
      assert.equal(res.status, 200);
      assert.equal(res.body.data.storage.backend, dialect);
      if (dialect === 'sqlite') {
        assert.equal(res.body.data.storage.historian, 'sqlite-file');
        assert.match(res.body.data.storage.historianLocation, /uns-history\.db$/);
      } else {
        assert.match(res.body.data.storage.historian, /partitioned|hypertable/);
      }
    });

    it('drops values declared before the retention period and keeps the newer ones and the latest value', async () => {
      const old = new Date(Date.now() - 40 * DAY_MS).toISOString();
      const recent = new Date(Date.now() - 2 * DAY_MS).toISOString();
      const publish = (timestamp: string, value: number) =>
        api.post('/api/v1/uns/data/publish', { topic: 'v1/retained/a/b', value, timestamp });
      assert.equal((await publish(old, 1)).status, 200);
      assert.equal((await publish(recent, 2)).status, 200);
      const put = await server.admin.put('/api/v1/system/uns/settings', { retentionDays: 30 });
      assert.equal(put.status, 200);
      const before = await unsCounts(server);
      await server.app.uns.applyRetention();
      const afterCounts = await unsCounts(server);
      assert.equal(before.values - afterCounts.values, 1);
      const history = await api.get('/api/v1/uns/data/history?topic=v1/retained/a/b');
      assert.deepEqual(
        history.body.data.map((v: { value: number }) => v.value),
        [2],
      );
      if (dialect === 'postgres' && server.app.uns.layout.kind === 'partitioned') {
        const day = new Date(Date.now() - 40 * DAY_MS).toISOString().slice(0, 10).replace(/-/g, '');
        const { rows } = await sql<{ n: number }>`
          select count(*)::int as n from pg_class where relname = ${`uns_values_d${day}`}`.execute(
          server.storage.db,
        );
        assert.equal(rows[0]?.n, 0, 'the whole partition of that day is dropped');
      }
    });
  });

  describe(`UNS broker start-up [${dialect}]`, () => {
    it('stops start-up with a message naming MERIDIAN_MQTT_PORT when the port is taken', async () => {
      const database = await createTestDatabase(dialect);
      const squatter = createServer();
      const port = await freePort();
      await new Promise<void>((resolve) => squatter.listen(port, '0.0.0.0', () => resolve()));
      try {
        const child = runMeridian(['serve'], {
          MERIDIAN_DATA_DIR: database.dataDir,
          DATABASE_URL: database.databaseUrl,
          MERIDIAN_HTTP_HOST: '127.0.0.1',
          MERIDIAN_HTTP_PORT: String(await freePort()),
          MERIDIAN_MQTT_PORT: String(port),
          MERIDIAN_ADMIN_PASSWORD: 'broker-startup-password',
        });
        const code = await child.exited;
        assert.notEqual(code, 0);
        assert.match(
          child.output(),
          new RegExp(`MQTT port ${port} is taken: choose another with MERIDIAN_MQTT_PORT`),
        );
      } finally {
        squatter.close();
        await database.drop();
      }
    });
  });
}
