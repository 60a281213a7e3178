import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createTestDatabase, type TestDatabase, testDialects } from '../helpers/dialects.js';
import { freePort } from '../helpers/free-port.js';
import { TestClient } from '../helpers/http-client.js';
import { runMeridian } from '../helpers/process.js';

const PASSWORD = 'durability-admin-password';

for (const dialect of testDialects()) {
  describe(`UNS durability: SIGKILL while publishing [${dialect}]`, () => {
    let database: TestDatabase;
    let env: Record<string, string | undefined>;

    before(async () => {
      database = await createTestDatabase(dialect);
      env = {
        MERIDIAN_DATA_DIR: database.dataDir,
        DATABASE_URL: database.databaseUrl,
        MERIDIAN_HTTP_HOST: '127.0.0.1',
        MERIDIAN_MQTT_PORT: '0',
        MERIDIAN_ADMIN_EMAIL: 'admin@example.com',
        MERIDIAN_ADMIN_PASSWORD: PASSWORD,
        MERIDIAN_LOG_LEVEL: 'info',
      };
    });
    after(() => database?.drop());

    it('keeps every value that was answered 200', async () => {
      const port = await freePort();
      const first = runMeridian(['serve'], { ...env, MERIDIAN_HTTP_PORT: String(port) });
      await first.waitFor(/Meridian ready in \d+ ms/);
      const base = new TestClient(`http://127.0.0.1:${port}`);
      const admin = await base.login('admin@example.com', PASSWORD);

      const acknowledged: { topic: string; timestamp: string; value: number }[] = [];
      let stop = false;
      const publisher = async (worker: number) => {
        for (let i = 0; !stop; i++) {
          const record = {
            topic: `v1/durable/w${worker}/m${i % 5}`,
            value: i,
            timestamp: new Date(Date.UTC(2026, 0, 1) + i * 1000).toISOString(),
          };
          try {
            const res = await admin.post('/api/v1/uns/data/publish', record);
            if (res.status === 200) acknowledged.push(record);
          } catch {
            return; // the connection died with the process
          }
        }
      };
      const workers = Array.from({ length: 16 }, (_, w) => publisher(w));
      while (acknowledged.length < 300) await new Promise((r) => setTimeout(r, 5));
      first.child.kill('SIGKILL');
      await first.exited;
      stop = true;
      await Promise.all(workers);

      const second = runMeridian(['serve'], { ...env, MERIDIAN_HTTP_PORT: String(port) });
      try {
        await second.waitFor(/Meridian ready in \d+ ms/);
        const again = await base.login('admin@example.com', PASSWORD);
        const missing: string[] = [];
        const byTopic = new Map<string, Set<string>>();
        for (const record of acknowledged) {
          if (!byTopic.has(record.topic)) {
            const res = await again.get(`/api/v1/uns/data/history?topic=${record.topic}&limit=1000`);
            assert.equal(res.status, 200, res.text);
            byTopic.set(
              record.topic,
              new Set(
                res.body.data.map((v: { timestamp: string; value: number }) => `${v.timestamp} ${v.value}`),
              ),
            );
          }
          const key = `${record.timestamp.replace('Z', '000Z')} ${record.value}`;
          if (!byTopic.get(record.topic)!.has(key)) missing.push(`${record.topic} ${key}`);
        }
        assert.deepEqual(missing, [], `${missing.length} of ${acknowledged.length} acknowledged values lost`);
      } finally {
        second.child.kill('SIGTERM');
        await second.exited;
      }
    });
  });
}
